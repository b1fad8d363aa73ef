"""Tests for rrscore.model.units: quantities given as SI numbers or "number unit" strings."""

import math

import pytest

from rrscore.model.units import UnitError, convert, dimension_name, parse_quantity

# Independently known conversion factors, from the definitions of the units.
MPH = 0.44704  # m/s, exact
FOOT = 0.3048  # m, exact
INCH = 0.0254  # m, exact
POUND = 0.45359237  # kg, exact
LBF = 4.4482216152605  # N, exact (pound times standard gravity)
PSI = 6894.757293168361  # Pa
HP = 745.69987158227022  # W, mechanical horsepower
EXACT = 1e-12


def approx(expected: float) -> object:
    return pytest.approx(expected, rel=EXACT, abs=0.0)


# Plain numbers


def test_int_is_taken_as_already_in_si_unit_and_returned_as_float() -> None:
    result = parse_quantity(90000, "kg")
    assert result == 90000.0
    assert type(result) is float


def test_float_passes_through_unchanged() -> None:
    assert parse_quantity(22.5, "m/s") == 22.5
    assert parse_quantity(-0.008, "1") == -0.008


# Strings with units


@pytest.mark.parametrize(
    ("text", "si_unit", "expected"),
    [
        ("1 mph", "m/s", MPH),
        ("80 km/h", "m/s", 80 / 3.6),
        ("80 kmh", "m/s", 80 / 3.6),
        ("80 kph", "m/s", 80 / 3.6),
        ("10 ft/s", "m/s", 10 * FOOT),
        ("1 ft", "m", FOOT),
        ("0.75 in", "m", 0.75 * INCH),
        ("2 yd", "m", 2 * 3 * FOOT),
        ("1 mi", "m", 5280 * FOOT),
        ("1 lbf", "N", LBF),
        ("200 kips", "N", 200_000 * LBF),
        ("1 kip", "N", 1000 * LBF),
        ("1 kgf", "N", 9.80665),
        ("1 tf", "N", 9806.65),
        ("1.5e3 kN", "N", 1.5e6),
        ("1 psi", "Pa", PSI),
        ("2 bar", "Pa", 2e5),
        ("1 atm", "Pa", 101325.0),
        ("0.5 MPa", "Pa", 5e5),
        ("1 hp", "W", HP),
        ("2 MW", "W", 2e6),
        ("1 kWh", "J", 3.6e6),
        ("3 short tons", "kg", 3 * 2000 * POUND),
        ("3 short ton", "kg", 3 * 2000 * POUND),
        ("1 long ton", "kg", 2240 * POUND),
        ("1 ton", "kg", 2000 * POUND),
        ("10 lb", "kg", 10 * POUND),
        ("90 t", "kg", 90_000.0),
        ("90 tonnes", "kg", 90_000.0),
        ("2 h", "s", 7200.0),
        ("3 min", "s", 180.0),
        ("10 Hz", "1/s", 10.0),
        ("10 1/s", "Hz", 10.0),
    ],
)
def test_string_with_unit_is_converted_to_si(text: str, si_unit: str, expected: float) -> None:
    assert parse_quantity(text, si_unit) == approx(expected)


def test_the_space_between_number_and_unit_is_optional() -> None:
    assert parse_quantity("90t", "kg") == 90_000.0
    assert parse_quantity("90 t", "kg") == 90_000.0
    assert parse_quantity("  90   t  ", "kg") == 90_000.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8 permille", 0.008),
        ("-8 permille", -0.008),
        ("8 per mille", 0.008),
        ("8 per_mille", 0.008),
        ("8 ‰", 0.008),
        ("0.8 %", 0.008),
        ("0.8%", 0.008),
        ("0.8 percent", 0.008),
        ("5 N/kN", 0.005),
    ],
)
def test_ratios_convert_to_plain_fractions(text: str, expected: float) -> None:
    assert parse_quantity(text, "1") == approx(expected)


@pytest.mark.parametrize(
    ("text", "si_unit", "expected"),
    [
        ("20 MN/m", "N/m", 2e7),
        ("100 kN/mm", "N/m", 1e8),
        ("20 kips/in", "N/m", 20_000 * LBF / INCH),
        ("100 lbf/in", "N/m", 100 * LBF / INCH),
        ("50 kN*s/m", "N*s/m", 5e4),
        ("50 kN s/m", "N*s/m", 5e4),
        ("50 kN·s/m", "N*s/m", 5e4),
        ("100 kg*m^2", "kg*m^2", 100.0),
        ("100 kg m^2", "kg*m^2", 100.0),
        ("100 kg*m**2", "kg*m^2", 100.0),
        ("100 kg m2", "kg*m^2", 100.0),
        ("100 kg·m²", "kg*m^2", 100.0),
        ("0.5 m/s^2", "m/s^2", 0.5),
        ("0.5 m/s2", "m/s^2", 0.5),
        ("0.5 m s^-1", "m/s", 0.5),
        ("0.5 m s-1", "m/s", 0.5),
        ("20 kN*m", "N*m", 2e4),
        ("20 kN-m", "N*m", 2e4),
        ("1 ft-lbf", "N*m", FOOT * LBF),
        ("2.5 m^2", "m^2", 2.5),
    ],
)
def test_compound_unit_expressions_are_parsed(text: str, si_unit: str, expected: float) -> None:
    assert parse_quantity(text, si_unit) == approx(expected)


def test_si_unit_may_itself_be_written_in_any_supported_form() -> None:
    assert parse_quantity("20 MN/m", "kN/mm") == approx(20.0)
    assert parse_quantity("1 m/s", "km/h") == approx(3.6)
    assert parse_quantity(5, "N/kN") == 5.0


def test_everything_after_the_first_slash_is_in_the_denominator() -> None:
    assert parse_quantity("1 m/s*s", "m/s^2") == 1.0
    assert parse_quantity("1 m/s/s", "m/s^2") == 1.0
    assert parse_quantity("3 kg/(m*s)", "kg/m/s") == 3.0


def test_word_units_may_be_written_in_any_case() -> None:
    assert parse_quantity("90 Tonnes", "kg") == 90_000.0
    assert parse_quantity("60 MPH", "m/s") == approx(60 * MPH)
    assert parse_quantity("1 PSI", "Pa") == approx(PSI)


def test_capital_k_is_read_as_kilo() -> None:
    assert parse_quantity("450 KN", "N") == 450_000.0


def test_si_prefixes_are_case_sensitive_and_the_error_suggests_the_right_case() -> None:
    with pytest.raises(UnitError, match=r"unknown unit 'mn' \(did you mean 'MN'\?\)"):
        parse_quantity("20 mn/m", "N/m")
    with pytest.raises(UnitError, match="unknown unit 'Mm'"):
        parse_quantity("5 Mm", "m")


# convert()


def test_convert_between_units_of_the_same_dimension() -> None:
    assert convert(60, "mph", "km/h") == approx(60 * MPH * 3.6)
    assert convert(1, "kN", "lbf") == approx(1000 / LBF)
    assert convert(8, "permille", "%") == approx(0.8)
    assert convert(1, "psi", "Pa") == approx(PSI)


def test_convert_between_different_dimensions_raises() -> None:
    with pytest.raises(UnitError, match="cannot convert 'kN' \\(force\\) to 'm' \\(length\\)"):
        convert(1, "kN", "m")


def test_convert_with_unknown_unit_raises() -> None:
    with pytest.raises(UnitError, match="unknown unit 'furlong'"):
        convert(1, "furlong", "m")


# dimension_name()


@pytest.mark.parametrize(
    ("si_unit", "name"),
    [
        ("kg", "mass"),
        ("m", "length"),
        ("m/s", "speed"),
        ("N", "force"),
        ("Pa", "pressure"),
        ("s", "time"),
        ("m/s^2", "acceleration"),
        ("N/m", "stiffness"),
        ("N*s/m", "damping"),
        ("kg*m^2", "moment of inertia"),
        ("W", "power"),
        ("N*m", "torque"),
        ("J", "energy"),
        ("m^2", "area"),
        ("Hz", "frequency"),
        ("1/s", "frequency"),
        ("1", "ratio"),
        ("N/kN", "specific resistance"),
        ("A", "current"),
        ("V", "voltage"),
        ("A*s", "charge"),
        ("V/A", "resistance"),
        ("K", "temperature"),
        ("rad", "angle"),
        ("rad/s", "angular speed"),
        ("m^3", "volume"),
    ],
)
def test_dimension_name_names_the_dimension(si_unit: str, name: str) -> None:
    assert dimension_name(si_unit) == name


@pytest.mark.parametrize(
    "si_unit",
    ["kg", "m", "m/s", "N", "Pa", "s", "m/s^2", "N/m", "N*s/m", "kg*m^2", "W", "N*m", "J",
     "m^2", "Hz", "1", "N/kN", "A", "V", "A*s", "V/A", "K", "rad", "rad/s", "m^3"],
)  # fmt: skip
def test_the_example_in_each_error_message_is_itself_accepted(si_unit: str) -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity("fast", si_unit)
    example = str(info.value).split("such as '")[1].split("'")[0]
    assert math.isfinite(parse_quantity(example, si_unit))


def test_dimension_name_of_an_unnamed_dimension_quotes_the_unit() -> None:
    assert dimension_name("kg/m") == "quantity in kg/m"


def test_invalid_si_unit_is_a_programming_error_not_a_unit_error() -> None:
    with pytest.raises(ValueError, match="invalid unit expression 'furlong'") as info:
        parse_quantity(1.0, "furlong")
    assert not isinstance(info.value, UnitError)


# Errors


def test_wrong_dimension_raises_and_quotes_the_value() -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity("90 kg/h", "kg")
    assert str(info.value) == "found '90 kg/h', expected a mass such as '90 t' or a number in kg"


def test_text_without_a_number_raises() -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity("fast", "m/s")
    assert str(info.value) == (
        "found 'fast', expected a speed such as '80 km/h' or a number in m/s"
    )


def test_unknown_unit_raises_and_names_the_unit() -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity("5 furlongs", "m")
    assert str(info.value) == (
        "found '5 furlongs': unknown unit 'furlongs'; "
        "expected a length such as '12.5 m' or a number in m"
    )


def test_bare_numeric_string_raises_because_its_unit_is_ambiguous() -> None:
    with pytest.raises(UnitError, match="found '12'"):
        parse_quantity("12", "kg")


@pytest.mark.parametrize("value", [True, False, None, [90, "t"], {"value": 90}])
def test_non_numeric_non_string_values_raise(value: object) -> None:
    with pytest.raises(UnitError, match="expected a mass"):
        parse_quantity(value, "kg")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "1e999 m", "nan m", 10**400])
def test_nan_and_infinite_values_raise(value: object) -> None:
    with pytest.raises(UnitError, match="expected a length"):
        parse_quantity(value, "m")


@pytest.mark.parametrize("text", ["5/s", "5 m^", "5 (m", "5 m)", "5 m 2", "5 m*", "1,5 m"])
def test_malformed_unit_expression_raises(text: str) -> None:
    with pytest.raises(UnitError, match="found"):
        parse_quantity(text, "m" if "s" not in text else "Hz")


def test_ratio_error_asks_for_a_plain_number() -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity("steep", "1")
    assert str(info.value) == (
        "found 'steep', expected a ratio such as '8 permille' or a plain number"
    )


@pytest.mark.parametrize("text", ["90\nkg/h" + "x" * 200, "90 m\n)", "\n" * 300])
def test_error_messages_are_short_single_lines_even_for_odd_input(text: str) -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity(text, "kg")
    message = str(info.value)
    assert "\n" not in message
    assert len(message) < 200


def test_unit_error_is_a_value_error() -> None:
    assert issubclass(UnitError, ValueError)


# the electric, thermal, angle and volume units (issue 49): SI from hand-worked factors


_PSI = 4.4482216152605 / 0.0254**2  # lbf (0.45359237 kg * 9.80665 m/s^2) per square inch


@pytest.mark.parametrize(
    ("text", "si_unit", "expected"),
    [
        ("1200 A", "A", 1200.0),
        ("350 mA", "A", 0.35),
        ("2 kA", "A", 2000.0),
        ("25 kV", "V", 25_000.0),
        ("750 V", "V", 750.0),
        ("400 Ah", "A*s", 400 * 3600.0),
        ("0.5 ohm", "V/A", 0.5),
        ("12 mΩ", "V/A", 0.012),
        ("300 K", "K", 300.0),
        ("20 °C", "K", 293.15),
        ("-40 degC", "K", 233.15),
        ("0 ℃", "K", 273.15),
        ("90 deg", "rad", math.pi / 2),
        ("2.5°", "rad", 2.5 * math.pi / 180),
        ("1 rev", "rad", 2 * math.pi),
        ("3000 rpm", "rad/s", 3000 * 2 * math.pi / 60),
        ("78 L", "m^3", 0.078),
        ("1 gal", "m^3", 231 * 0.0254**3),  # the US gallon: 231 cubic inches
        ("5 gallons", "m^3", 5 * 3.785411784e-3),
        ("3 kWh", "J", 3 * 3.6e6),
        ("2 MWh", "J", 2 * 3.6e9),
        ("4 MJ", "J", 4e6),
        ("5 bar", "Pa", 5e5),
        ("1013 mbar", "Pa", 101_300.0),
        ("1013 hPa", "Pa", 101_300.0),
        ("500 kPa", "Pa", 5e5),
        ("70 psi", "Pa", 70 * _PSI),
        ("1 kV*A", "W", 1000.0),
        ("4186 J/kg/°C", "J/(kg*K)", 4186.0),  # inside a compound unit: a difference
    ],
)
def test_new_units_convert_to_si_by_their_defining_factors(text: str, si_unit: str,
                                                          expected: float) -> None:
    assert parse_quantity(text, si_unit) == pytest.approx(expected, rel=1e-12)


def test_celsius_alone_is_a_temperature_and_converts_both_ways() -> None:
    assert convert(68.0, "degC", "K") == pytest.approx(341.15, rel=1e-12)
    assert convert(300.0, "K", "°C") == pytest.approx(26.85, rel=1e-12)
    assert convert(100.0, "°C", "℃") == pytest.approx(100.0, rel=1e-12)
    assert convert(1.0, "J/°C", "J/K") == pytest.approx(1.0, rel=1e-12)


def test_an_angle_is_not_a_ratio_nor_a_temperature_a_charge() -> None:
    # SI counts the radian as 1; a grade written "2 deg" must not pass for 2 rad
    with pytest.raises(UnitError, match="found '2 deg', expected a ratio"):
        parse_quantity("2 deg", "1")
    with pytest.raises(UnitError, match="found '20 C', expected a temperature such as "
                                        "'20 °C'"):
        parse_quantity("20 C", "K")  # C is the coulomb


def test_an_unknown_unit_of_a_new_dimension_is_named() -> None:
    with pytest.raises(UnitError, match="found '70 °F': unknown unit '°F'; expected a "
                                        "temperature"):
        parse_quantity("70 °F", "K")
    with pytest.raises(UnitError, match="unknown unit 'amps'; expected a current such as "
                                        "'1200 A' or a number in A"):
        parse_quantity("5 amps", "A")
