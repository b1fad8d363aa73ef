"""``rrs import openrails FILE``: Open Rails / MSTS rolling stock as rrscore configs.

The reading and mapping are :mod:`rrscore.interop.openrails`'s; here the command line,
and the files written (each whole or absent, :func:`rrscore.run.files.write_atomically`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ..interop.openrails import import_file
from ..model.errors import OutputError
from ..run.files import write_atomically

EXAMPLE = ("rrs import openrails TRAINS/TRAINSET/MyLoco/myloco.eng --out configs/imported\n  "
           "rrs import openrails TRAINS/CONSISTS/freight.con --out configs/imported")


def add_import_command(sub: argparse._SubParsersAction,
                       command: Callable[[str, str, str], argparse.ArgumentParser]) -> None:
    """Add ``rrs import openrails`` to the subcommands ``sub`` (``command`` makes a
    subcommand's parser, with rrs's help layout)."""
    p = command("import", "write rrscore configs from another program's files", EXAMPLE)
    kinds = p.add_subparsers(dest="format", required=True, metavar="FORMAT")
    o = kinds.add_parser(
        "openrails", help="Open Rails / MSTS .eng, .wag or .con (STF text, UTF-16 or "
        "UTF-8)", description="Write an rrscore vehicle config for an .eng or .wag (an "
        "engine drives with the table_loco plugin), or a train config and the vehicle "
        "configs it names for a .con. Values are converted to SI; tokens without an "
        "rrscore key are listed at the top of each file and on one line here. See "
        "docs/openrails.md for the token table.", formatter_class=p.formatter_class,
        epilog=p.epilog)
    o.add_argument("file", help=".eng, .wag or .con file")
    o.add_argument("--out", default=".", help="folder to write into (default: here); a "
                   "consist's vehicles go to OUT/vehicles/, its train to OUT/trains/")
    o.add_argument("--trainset", metavar="DIR", help="a consist's TRAINSET folder (default: "
                   "TRAINSET beside the .con's folder, else the .con's folder)")
    o.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import ``args.file`` into ``args.out``; print what was written and what was not
    mapped."""
    result = import_file(args.file, args.trainset)
    out = Path(args.out)
    for rel, text in result.files.items():
        target = out / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, text)
        except OSError as exc:
            raise OutputError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
        print(f"wrote {target}")
    unmapped = ", ".join(result.unmapped) if result.unmapped else "none"
    print(f"not mapped ({len(result.unmapped)}): {unmapped}")
    return 0
