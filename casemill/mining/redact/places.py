"""Street addresses, and the city and postal code written right after one.

What makes a street address (`AFTER_NUMBER`, the part of `detect.DIGITS` after a house
number), and the city (`city_after`) and postal code (`POSTCODE_AFTER`) that may follow it in
text ("12 Main St, Springfield, IL 62701"). No detector looks for a city or a postal code elsewhere
in text (every capitalised word, every 5-digit number): the redactor searches text for those
the records hold. States and countries are kept.
"""

from __future__ import annotations

import re

STREET_TYPES = (
    "street|st|avenue|ave|road|rd|drive|dr|lane|ln|boulevard|blvd|way|court|ct|place|pl|terrace|"
    "parkway|pkwy|circle|cir|highway|hwy|square|sq|trail|trl|alley|crescent|close"
)
# the other street types of Faker's US addresses (Infinite Loop, Sunset Vista, Maple Crossing):
# ordinary words too, so only written capitalised
TITLED_STREET_TYPES = (
    "Branch|Bridge|Brook|Brooks|Burg|Burgs|Bypass|Camp|Canyon|Cape|Causeway|Center|Centers|"
    "Circles|Cliff|Cliffs|Club|Common|Corner|Corners|Course|Courts|Cove|Coves|Creek|Crest|"
    "Crossing|Crossroad|Curve|Dale|Dam|Divide|Drives|Estate|Estates|Expressway|Extension|"
    "Extensions|Fall|Falls|Ferry|Field|Fields|Flat|Flats|Ford|Fords|Forest|Forge|Forges|Fork|"
    "Forks|Fort|Freeway|Garden|Gardens|Gateway|Glen|Glens|Green|Greens|Grove|Groves|Harbor|"
    "Harbors|Haven|Heights|Hill|Hills|Hollow|Inlet|Island|Islands|Isle|Junction|Junctions|Key|"
    "Keys|Knoll|Knolls|Lake|Lakes|Land|Landing|Light|Lights|Loaf|Lock|Locks|Lodge|Loop|Mall|"
    "Manor|Manors|Meadow|Meadows|Mews|Mill|Mills|Mission|Motorway|Mount|Mountain|Mountains|"
    "Neck|Orchard|Oval|Overpass|Park|Parks|Parkways|Pass|Passage|Path|Pike|Pine|Pines|Plain|"
    "Plains|Plaza|Point|Points|Port|Ports|Prairie|Radial|Ramp|Ranch|Rapid|Rapids|Rest|Ridge|"
    "Ridges|River|Roads|Route|Row|Rue|Run|Shoal|Shoals|Shore|Shores|Skyway|Spring|Springs|"
    "Spur|Spurs|Squares|Station|Stravenue|Stream|Streets|Summit|Throughway|Trace|Track|"
    "Trafficway|Tunnel|Turnpike|Underpass|Union|Unions|Valley|Valleys|Via|Viaduct|View|Views|"
    "Village|Villages|Ville|Vista|Walk|Walks|Wall|Ways|Well|Wells"
)
_UNIT = r"(?:,?\s+(?i:apt|apartment|suite|ste|unit|floor|fl|#)\.?\s*#?\s*[A-Za-z0-9-]+)?"
_WORD = r"[A-Za-z][A-Za-z'-]*\.?"
_STREET = rf"(?:(?i:{STREET_TYPES})|{TITLED_STREET_TYPES})\b\.?{_UNIT}"
# a street address from the end of its house number's digits: maybe a letter (12B), up to four
# words of the street's name, then a street-type word and maybe a unit
AFTER_NUMBER = rf"[A-Za-z]?\s+(?:{_WORD}\s+){{0,3}}{_WORD}\s+{_STREET}"

# A city written right after a street address ("1457 Birchwood Avenue, Tacoma."): after ", ",
# one to three capitalised words, ending at punctuation, the end of a line or text, a state
# (its name or 2-letter code) or a postal code; not a state or country itself, nor a word such
# as Please (the words end where a lower-case word follows: "..., Please send it" is no city).
US_STATES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|"
    "Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|"
    "Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|"
    "New Hampshire|New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|"
    "Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|"
    "Virginia|Washington|West Virginia|Wisconsin|Wyoming|District of Columbia"
)
_CITY_WORD = r"(?:(?:St|Ste|Ft|Mt)\.\s?)?[A-Z][a-z]+(?:['’-][A-Za-z][a-z]+)*"
CITY_AFTER = re.compile(
    rf",[ \t]*(?P<city>{_CITY_WORD}(?: {_CITY_WORD}){{0,2}}?)"
    r"(?=[ \t]*(?:[,.;!?\r\n\x00]|\Z)"
    rf"|[ \t]+(?:(?:{US_STATES})(?![\w'’-])|[A-Z]{{2}}(?![\w'’-])|\d{{5}}(?![\w-])))"
)
STATE_NAMES = frozenset(s.lower() for s in US_STATES.split("|"))
# what makes a state's name a city (New York, NY): a state's code or a postal code after it
THEN_CODE = re.compile(r"[ \t]*,?[ \t]*(?:[A-Z]{2}(?![\w'’-])|\d{5}(?![\w-]))")
NOT_CITIES = frozenset(
    {
        "united states", "usa", "america", "canada", "mexico", "united kingdom", "england",
        "please", "thanks", "thank you", "thank", "yes", "no", "sorry", "hi", "hello", "ok",
        "okay", "and", "but", "so", "also", "then", "best", "regards", "cheers", "sincerely",
    }
)  # fmt: skip


# a postal code after a street address's city: its state (name or code) first, if any
POSTCODE_AFTER = re.compile(
    rf"[ \t]*,?[ \t]*(?:(?:{US_STATES}|[A-Z]{{2}})[ \t]*,?[ \t]*)?"
    r"(?P<zip>\d{5}(?:-\d{4})?)(?![\w-])"
)


def city_after(text: str, end: int) -> tuple[int, str] | None:
    """Where a city written right after a street address ending at `end` starts, and the
    city (`CITY_AFTER`), or None."""
    m = CITY_AFTER.match(text, end)
    if m is None:
        return None
    city = m.group("city")
    low = city.lower()
    if low in NOT_CITIES or (low in STATE_NAMES and not THEN_CODE.match(text, m.end())):
        return None
    return m.start("city"), city


_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "on",
        "in",
        "of",
        "to",
        "for",
        "my",
        "your",
        "our",
        "is",
        "are",
        "and",
        "or",
        "at",
        "by",
        "with",
        "from",
        "this",
        "that",
        "it",
        "was",
        "be",
        "been",
        "has",
        "have",
        "had",
        "day",
        "days",
        "item",
        "items",
        "box",
        "boxes",
        "order",
        "orders",
    ]
)


def address_ok(text: str) -> bool:
    words = text.split()
    return not any(w.lower().strip(".,") in _STOP for w in words[1:-1])
