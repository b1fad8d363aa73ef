"""The STF reader and the unit suffixes, against hand-worked values; malformed files give
one line naming the file and the line."""

from __future__ import annotations

import pytest

from rrscore.interop.openrails.stf import Block, StfError, Word, decode, parse_text, read_file
from rrscore.interop.openrails.units import to_si

LB = 0.45359237  # kg, the international pound (exact)
LBF = LB * 9.80665  # N (exact)


def _si(text: str, dimension: str) -> float:
    return to_si(Word(text, 1), dimension, "f.eng", "Token")


def test_blocks_words_strings_and_comments_are_read_as_open_rails_reads_them():
    text = ('SIMISA@@@@@@@@@@JINX0D0t______\n\nWagon ( "a " + "b"\n'
            "  comment ( Mass ( 1t ) )\n  #Mass ( 2t )\n  Skip ( x )\n"
            "  Mass ( 80t-uk )\n  Size ( 3m 4m\n 20m ) )\n")
    root = parse_text(text, "f.wag")
    wagon = root.block("WAGON")
    assert [w.text for w in wagon.words()] == ["a b"]
    assert len(wagon.blocks("mass")) == 1  # the commented ones are gone
    mass = wagon.block("Mass")
    assert (mass.line, mass.flat_words()[0].text) == (7, "80t-uk")
    assert [w.line for w in wagon.block("Size").flat_words()] == [8, 8, 9]


def test_the_last_of_a_repeated_token_counts():
    root = parse_text("Wagon ( Mass ( 1t ) Mass ( 2t ) )", "f.wag")
    assert root.block("Wagon").block("Mass").flat_words()[0].text == "2t"


@pytest.mark.parametrize("encoding", ["utf-16-le-bom", "utf-16-be-bom", "utf-8", "utf-8-bom",
                                      "cp1252"])
def test_files_in_each_encoding_msts_and_open_rails_write_read_alike(tmp_path, encoding):
    text = 'Wagon ( "Bétonnière" Mass ( 12t ) )\r\n'
    data = {"utf-16-le-bom": b"\xff\xfe" + text.encode("utf-16-le"),
            "utf-16-be-bom": b"\xfe\xff" + text.encode("utf-16-be"),
            "utf-8": text.encode("utf-8"), "utf-8-bom": b"\xef\xbb\xbf" + text.encode(),
            "cp1252": text.encode("cp1252")}[encoding]
    assert decode(data) == text
    (tmp_path / "x.wag").write_bytes(data)
    wagon = read_file(tmp_path / "x.wag").block("Wagon")
    assert wagon.words()[0].text == "Bétonnière"


def test_an_include_is_read_in_place_relative_to_the_including_file(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "c.inc").write_text("Coupling ( Spring ( r0 ( 1cm ) ) )")
    (tmp_path / "x.wag").write_text('Wagon ( include ( "inc\\c.inc" ) Mass ( 1t ) )')
    wagon = read_file(tmp_path / "x.wag").block("Wagon")
    assert [b.name for b in wagon.items if isinstance(b, Block)] == ["Coupling", "Mass"]


@pytest.mark.parametrize(("text", "dimension", "si"), [
    ("80t-uk", "mass", 80 * 2240 * LB),  # 81,283.75 kg (a long ton is 1016.0469 kg)
    ("130t-us", "mass", 130 * 2000 * LB),  # 117,933.02 kg
    ("120t", "mass", 120_000.0),
    ("5000lb", "mass", 5000 * LB),
    ("45000", "mass", 45_000.0),  # no suffix: kg
    ("3000kW", "power", 3.0e6),
    ("4000hp", "power", 4000 * 550 * 0.3048 * LBF),  # 2,982,799.5 W
    ("400kN", "force", 4.0e5),
    ("60000lbf", "force", 60000 * LBF),
    ("70mph", "speed", 70 * 1609.344 / 3600),
    ("90km/h", "speed", 25.0),
    ("90kmh", "speed", 25.0),
    ("12", "speed", 12.0),  # no suffix: m/s
    ("21in", "length", 21 * 0.0254),
    ("65ft", "length", 65 * 0.3048),
    ("460mm", "length", 0.46),
    ("2.2cm", "length", 0.022),
    ("1e5lbf/in", "stiffness", 1e5 * LBF / 0.0254),
    ("20kN/m", "stiffness", 2.0e4),
    ("3lbf/mph", "davis_b", 3 * LBF / (1609.344 / 3600)),
    ("0.09lbf/mph^2", "davis_c", 0.09 * LBF / (1609.344 / 3600) ** 2),
    ("70psi", "pressure", 70 * LBF / 0.0254**2),
    ("5bar", "pressure", 5.0e5),
    ("500kPa", "pressure", 5.0e5),
    ("6000kgm^2", "inertia", 6000.0),
])
def test_unit_suffixes_convert_to_si_by_their_definitions(text, dimension, si):
    assert _si(text, dimension) == pytest.approx(si, rel=1e-12)


def test_the_brief_s_examples_by_hand():
    assert _si("3000kW", "power") == 3.0e6
    # 80 long tons of 2240 lb of 0.45359237 kg: 81,283.75 kg (81,280 with 1016 kg per ton)
    assert _si("80t-uk", "mass") == pytest.approx(81_283.752_7, abs=1e-3)


@pytest.mark.parametrize(("text", "line", "words"), [
    ("Wagon (\n Mass ( 80t )\n", 1, ["never closed", "Wagon ("]),
    ("Wagon ( Mass ( 80t ) ) )", 1, ["')'"]),
    ('Wagon (\n Name ( "abc )\n)', 2, ["quoted string"]),
    ('Wagon ( "a" + b )', 1, ["'+'"]),
    ("Wagon (\n comment ( x \n", 2, ["comment"]),
    ("Wagon ( include ( \"none.inc\" ) )", 1, ["none.inc"]),
])
def test_malformed_stf_is_one_line_naming_file_and_line(tmp_path, text, line, words):
    path = tmp_path / "bad.wag"
    path.write_text(text)
    with pytest.raises(StfError) as info:
        read_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: line {line}: ")
    for w in words:
        assert w in message


@pytest.mark.parametrize(("text", "words"), [
    ("abc", ["'abc'", "a mass"]),
    ("80stone", ["unknown unit 'stone'", "a mass", "t-uk"]),
    ("80kW", ["unknown unit 'kW'", "a mass"]),
    ("1e999t", ["finite"]),
])
def test_a_bad_number_or_unit_is_one_line_naming_the_token(text, words):
    with pytest.raises(StfError) as info:
        to_si(Word(text, 7), "mass", "f.wag", "Mass")
    message = str(info.value)
    assert message.startswith("f.wag: line 7: Mass: ")
    for w in words:
        assert w in message


def test_an_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(StfError, match=r"none\.eng: cannot be read"):
        read_file(tmp_path / "none.eng")


def test_blocks_nested_past_any_real_file_are_refused_not_a_recursion_error():
    with pytest.raises(StfError, match="nested deeper"):
        parse_text("a " + "( " * 1000 + ") " * 1000, "deep.eng")


def test_nothing_in_a_file_is_evaluated(tmp_path):
    # Python (or C#) in a value is a word like any other: read as text, refused as a number
    marker = tmp_path / "touched"
    code = f"__import__('pathlib').Path('{marker}').touch()"
    root = parse_text(f'Wagon ( Mass ( "{code}" ) )', "f.wag")
    word = root.block("Wagon").block("Mass").flat_words()[0]
    with pytest.raises(StfError):
        to_si(word, "mass", "f.wag", "Mass")
    assert not marker.exists()


@pytest.mark.parametrize("comment", ["#(Comment)", "# (Comment)", "Skip( ** comment ** )",
                                     "Skip ( ** comment ** )", "comment ( a ( b ) c )"])
def test_parenthetical_comments_can_go_anywhere_as_in_open_rails_own_test(comment):
    # the cases of Open Rails' ParentheticalCommentsCanGoAnywhere, before and after a Light
    for text in (f"Wagon( Lights( Light( 1 ) {comment} Light( 2 ) ) Sound( test.sms ) )",
                 f"Wagon( Lights( Light( 1 ) Light( 2 ) {comment} ) Sound( test.sms ) )"):
        wagon = parse_text(text, "f.wag").block("Wagon")
        lights = wagon.block("Lights").blocks("Light")
        assert [b.flat_words()[0].text for b in lights] == ["1", "2"]
        assert wagon.block("Sound").flat_words()[0].text == "test.sms"


def test_a_bad_value_in_an_included_file_names_that_file_and_its_line(tmp_path):
    from rrscore.interop.openrails import read_vehicle

    (tmp_path / "c.inc").write_text("Coupling (\n Spring (\n  r0 ( 5furlong ) ) )")
    (tmp_path / "x.wag").write_text('Wagon ( Mass ( 1t ) Size ( 1 1 10 )\n include ( "c.inc" ) )')
    with pytest.raises(StfError) as info:
        read_vehicle(tmp_path / "x.wag")
    assert str(info.value).startswith(f"{tmp_path / 'c.inc'}: line 3: r0: found '5furlong'")
