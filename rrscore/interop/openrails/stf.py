"""The STF text format of Microsoft Train Simulator and Open Rails, read into blocks.

An STF file is a sequence of items separated by white space: words (``Mass``,
``80t-uk``), quoted strings (``"a name"``, with ``\\n``, ``\\t``, ``\\"`` and ``\\\\``
escapes, and ``"a" + "b"`` joined) and parenthesised blocks. A word directly before a
block names it: ``Wagon ( Mass ( 80t-uk ) )`` is the block ``Wagon`` holding the block
``Mass`` holding the word ``80t-uk``.

Comments are dropped as Open Rails drops them: ``comment ( ... )`` and ``skip ( ... )``
(any case) with their block, and an item whose word starts with ``#`` with the block
that follows it, if one does. ``include ( "file" )`` reads the named file (relative to the
including file) in its place. A first line ``SIMISA@@@@@@@@@@JINX0...`` is the MSTS
header and is skipped.

Files are UTF-16 (little- or big-endian, with its byte-order mark, as MSTS wrote them),
UTF-8 (with or without a mark), or else Windows-1252. Nothing here evaluates anything
from the file: it is split into words and blocks, and numbers are read by
:mod:`.units` where a mapping asks for them. A malformed file is one
:class:`StfError`, naming the file and the line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ...model.errors import ConfigError

#: Words that start a comment: the block after them is dropped (case ignored).
COMMENT_WORDS = frozenset({"comment", "skip", "_skip"})
#: How deep blocks may nest: far beyond any real file, and short of Python's recursion.
MAX_DEPTH = 200
#: How deep includes may nest (a file including itself is caught before this).
MAX_INCLUDES = 16


class StfError(ConfigError):
    """A file that is not well-formed STF, or a value in it that cannot be read: one line
    naming the file and the line."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        super().__init__(file, f"line {line}" if line else None, message)
        self.line = line


@dataclass
class Word:
    """A word or quoted string, the line it is on, and the file (an included one's name
    where an include brought it in)."""

    text: str
    line: int
    quoted: bool = False
    file: str = ""


@dataclass
class Block:
    """A named block: its name (as written), the line it opens on, and its items in order
    (:class:`Word` or :class:`Block`)."""

    name: str
    line: int
    items: list[Word | Block] = field(default_factory=list)
    file: str = ""

    def blocks(self, name: str) -> list[Block]:
        """The blocks directly inside this one named ``name`` (case ignored), in order."""
        key = name.lower()
        return [b for b in self.items if isinstance(b, Block) and b.name.lower() == key]

    def block(self, name: str) -> Block | None:
        """The last block named ``name`` directly inside (the last one counts, as in Open
        Rails), or None."""
        found = self.blocks(name)
        return found[-1] if found else None

    def words(self) -> list[Word]:
        """The words directly inside this block (not those of its sub-blocks)."""
        return [w for w in self.items if isinstance(w, Word)]

    def flat_words(self) -> list[Word]:
        """Every word inside this block, its sub-blocks' too, in order."""
        out: list[Word] = []
        for item in self.items:
            out.extend(item.flat_words() if isinstance(item, Block) else [item])
        return out


def decode(data: bytes) -> str:
    """The text of an STF file's bytes: UTF-16 with a byte-order mark, UTF-8, or else
    Windows-1252 (whose few undefined bytes are kept as the same code points)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    # UTF-16 without a mark: every other byte of ASCII text is zero
    if len(data) >= 4 and data[1] == 0 and data[3] == 0 and data[0] != 0:
        return data.decode("utf-16-le", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace") if _cp1252_ok(data) else \
            data.decode("latin-1")


def _cp1252_ok(data: bytes) -> bool:
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return False
    return True


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def tokens(text: str, file: str) -> Iterator[tuple[str, int, bool]]:
    """The file's tokens as ``(text, line, quoted)``: ``(`` and ``)`` on their own, quoted
    strings unquoted (and joined where ``+`` joins them), other words as written."""
    i, n, line = 0, len(text), 1
    pending: tuple[str, int, bool] | None = None  # a quoted string that a '+' may extend
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c.isspace() or c == "\0":
            i += 1
            continue
        if c == "+" and pending is not None:
            # "a" + "b": the next item must be a quoted string
            j = i + 1
            while j < n and text[j].isspace():
                line += text[j] == "\n"
                j += 1
            if j < n and text[j] == '"':
                s, i, line = _string(text, j, line, file)
                pending = (pending[0] + s, pending[1], True)
                continue
            raise StfError(file, line, "found '+' not followed by a quoted string, expected "
                                       "'\"a\" + \"b\"' to join two strings")
        if pending is not None:
            yield pending
            pending = None
        if c in "()":
            yield c, line, False
            i += 1
        elif c == '"':
            start = line
            s, i, line = _string(text, i, line, file)
            pending = (s, start, True)
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()"\0':
                j += 1
            yield text[i:j], line, False
            i = j
    if pending is not None:
        yield pending


def _string(text: str, i: int, line: int, file: str) -> tuple[str, int, int]:
    """The quoted string starting at ``text[i]`` (a ``"``): its value, the index after it,
    and the line it ends on."""
    start = line
    out = []
    i += 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            return "".join(out), i + 1, line
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            line += nxt == "\n"
            i += 2
            continue
        line += c == "\n"
        out.append(c)
        i += 1
    raise StfError(file, start, "found a quoted string that is never closed, expected a "
                                'closing \'"\'')


def parse_text(text: str, file: str, base: Path | None = None,
               _seen: tuple[str, ...] = ()) -> Block:
    """The file's text as one root :class:`Block` (named ``""``) holding its top-level
    items. ``base`` is the folder ``include`` paths are relative to (None: includes are an
    error)."""
    root = Block("", 1, file=file)
    stack: list[Block] = [root]
    toks = list(tokens(text, file))
    k = 0
    if toks and toks[0][0].upper().startswith("SIMISA@@"):
        k = 1  # the MSTS header
    while k < len(toks):
        word, line, quoted = toks[k]
        nxt = toks[k + 1][0] if k + 1 < len(toks) and not toks[k + 1][2] else None
        if not quoted and word == "(":
            # an unnamed block: (a b c) within a block, as in tables of numbers
            block = Block("", line, file=file)
            _open(stack, block, file)
            k += 1
            continue
        if not quoted and word == ")":
            if len(stack) == 1:
                raise StfError(file, line, "found ')' with no '(' open, expected the end "
                                           "of the file or an item")
            stack.pop()
            k += 1
            continue
        lowered = word.lower()
        comment = not quoted and (lowered in COMMENT_WORDS or word.startswith("#"))
        if comment:
            k = _skip_block(toks, k + 1, file) if nxt == "(" else k + 1
            continue
        if not quoted and lowered == "include" and nxt == "(":
            k = _include(toks, k, stack[-1], file, base, _seen)
            continue
        if nxt == "(":
            block = Block(word, line, file=file)
            _open(stack, block, file)
            k += 2
            continue
        stack[-1].items.append(Word(word, line, quoted, file))
        k += 1
    if len(stack) > 1:
        opened = stack[-1]
        what = f"'{opened.name} ('" if opened.name else "'('"
        raise StfError(file, opened.line, f"found {what} never closed (the file ends "
                                          "first), expected a ')' for it")
    return root


def _open(stack: list[Block], block: Block, file: str) -> None:
    if len(stack) > MAX_DEPTH:
        raise StfError(file, block.line, f"found blocks nested deeper than {MAX_DEPTH}, "
                                         "expected an STF file")
    stack[-1].items.append(block)
    stack.append(block)


def _skip_block(toks: list[tuple[str, int, bool]], k: int, file: str) -> int:
    """The index after the block that opens at ``toks[k]`` (a ``(``)."""
    depth, start = 0, toks[k][1]
    while k < len(toks):
        word, _, quoted = toks[k]
        if not quoted and word == "(":
            depth += 1
        elif not quoted and word == ")":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    raise StfError(file, start, "found a comment block never closed (the file ends first), "
                                "expected a ')' for it")


def _include(toks: list[tuple[str, int, bool]], k: int, into: Block, file: str,
             base: Path | None, seen: tuple[str, ...]) -> int:
    line = toks[k][1]
    end = _skip_block(toks, k + 1, file)
    inner = [t for t in toks[k + 2:end - 1]]
    if len(inner) != 1:
        raise StfError(file, line, "found an include with "
                                   f"{len(inner)} items, expected include ( \"file\" )")
    if base is None:
        raise StfError(file, line, "found an include, expected none here")
    name = inner[0][0].replace("\\", "/")
    target = (base / name).resolve()
    if str(target) in seen or len(seen) >= MAX_INCLUDES:
        raise StfError(file, line, f"found include ( {name!r} ) within itself, expected "
                                   "includes that end")
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise StfError(file, line, f"found include ( {name!r} ), which cannot be read "
                                   f"({exc.strerror or exc})") from None
    sub = parse_text(decode(data), str(target), target.parent, (*seen, str(target)))
    into.items.extend(sub.items)
    return end


def read_file(path: str | Path) -> Block:
    """Parse the STF file at ``path`` (its includes relative to its folder)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise StfError(str(path), None, f"cannot be read: {exc.strerror or exc}") from None
    resolved = str(p.resolve())
    return parse_text(decode(data), str(path), p.parent, (resolved,))
