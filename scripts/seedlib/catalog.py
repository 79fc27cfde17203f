"""The people and products the seed scenarios draw on.

Customers are `C1001`..., products `P100`..., variants `P100-M-blue` (product, size, colour; `OS`
for one size). Prices are USD with two decimals; every variant of a product shares its price
unless the point of a seed is a price difference.
"""

from __future__ import annotations

# id: (name, street, city, state, zip)
CUSTOMERS: dict[str, tuple[str, str, str, str, str]] = {
    "C1001": ("Ana Diaz", "12 Elm St", "Springfield", "IL", "62701"),
    "C1002": ("Ben Okafor", "48 Lake Ave", "Madison", "WI", "53703"),
    "C1003": ("Chen Wei", "7 Pine Ct", "Seattle", "WA", "98101"),
    "C1004": ("Dana Kowalski", "301 Oak Blvd", "Austin", "TX", "78701"),
    "C1005": ("Elif Yilmaz", "22 Birch Rd", "Denver", "CO", "80202"),
    "C1006": ("Farah Haddad", "9 Cedar Ln", "Boston", "MA", "02108"),
    "C1007": ("Gabriel Souza", "150 Maple Dr", "Phoenix", "AZ", "85004"),
    "C1008": ("Hana Sato", "63 Willow Way", "San Jose", "CA", "95113"),
    "C1009": ("Ivan Petrov", "5 Spruce St", "Columbus", "OH", "43215"),
    "C1010": ("Julia Romano", "88 Aspen Ct", "Raleigh", "NC", "27601"),
    "C1011": ("Kwame Mensah", "14 Harbor St", "Baltimore", "MD", "21202"),
    "C1012": ("Laura Jensen", "410 Prairie Rd", "Omaha", "NE", "68102"),
    "C1013": ("Mateo Alvarez", "27 Canyon Dr", "Albuquerque", "NM", "87102"),
    "C1014": ("Nadia Rahman", "3 Orchard Pl", "Trenton", "NJ", "08608"),
    "C1015": ("Oscar Lindqvist", "76 Fjord Ave", "Minneapolis", "MN", "55401"),
    "C1016": ("Priya Nair", "19 Lotus Ln", "Edison", "NJ", "08817"),
    "C1017": ("Quinn Harper", "240 Ridge Rd", "Boise", "ID", "83702"),
    "C1018": ("Rosa Delgado", "58 Mission St", "San Antonio", "TX", "78205"),
    "C1019": ("Samir Aziz", "11 Palm Ave", "Tampa", "FL", "33602"),
    "C1020": ("Tara Oneill", "6 Clover St", "Providence", "RI", "02903"),
    "C1021": ("Umar Siddiqui", "92 Crescent Rd", "Dallas", "TX", "75201"),
    "C1022": ("Vera Novak", "17 Vine St", "Cincinnati", "OH", "45202"),
    "C1023": ("Wen Li", "350 Bay St", "Oakland", "CA", "94607"),
    "C1024": ("Ximena Cruz", "44 Sol Ave", "El Paso", "TX", "79901"),
    "C1025": ("Yusuf Demir", "8 Garden Ct", "Newark", "NJ", "07102"),
    "C1026": ("Zoe Bennett", "129 Hill St", "Burlington", "VT", "05401"),
    "C1027": ("Aiko Tanaka", "71 Sakura Ln", "Honolulu", "HI", "96813"),
    "C1028": ("Bruno Costa", "36 River Rd", "Richmond", "VA", "23219"),
    "C1029": ("Camille Dubois", "203 Royal St", "New Orleans", "LA", "70112"),
    "C1030": ("Diego Herrera", "15 Mesa Dr", "Tucson", "AZ", "85701"),
    "C1031": ("Esther Cohen", "62 Park Ave", "Hartford", "CT", "06103"),
    "C1032": ("Femi Adeyemi", "25 Sunset Blvd", "Atlanta", "GA", "30303"),
    "C1033": ("Greta Schmidt", "4 Linden St", "Milwaukee", "WI", "53202"),
    "C1034": ("Hiro Nakamura", "80 Bamboo Way", "Sacramento", "CA", "95814"),
    "C1035": ("Ines Moreau", "33 Coast Hwy", "Santa Cruz", "CA", "95060"),
    "C1036": ("Jamal Carter", "118 Union St", "Memphis", "TN", "38103"),
    "C1037": ("Kira Ivanova", "57 Tundra Rd", "Anchorage", "AK", "99501"),
    "C1038": ("Liam Walsh", "21 Quay St", "Portland", "ME", "04101"),
    "C1039": ("Maya Patel", "66 Lotus Ct", "Plano", "TX", "75074"),
    "C1040": ("Noah Fischer", "9 Brook Ln", "Lincoln", "NE", "68508"),
    "C1041": ("Olivia Grant", "140 Summit Ave", "Saint Paul", "MN", "55102"),
    "C1042": ("Pablo Ruiz", "31 Olive St", "Fresno", "CA", "93721"),
    "C1043": ("Rania Khalil", "77 Grove St", "Dearborn", "MI", "48126"),
    "C1044": ("Sven Olsen", "2 Harbor View", "Duluth", "MN", "55802"),
    "C1045": ("Thandi Dlamini", "55 Magnolia Ave", "Charleston", "SC", "29401"),
    "C1046": ("Victor Lang", "18 Foundry Rd", "Pittsburgh", "PA", "15222"),
}

# product id: (name, price, {variant suffix: available}); a variant with its own price is
# written as suffix -> (available, price)
PRODUCTS: dict[str, tuple[str, float, dict[str, bool | tuple[bool, float]]]] = {
    "P100": ("Ceramic mug 12oz", 14.50, {"OS-white": True, "OS-blue": True}),
    "P101": ("Linen tea towel set", 18.00, {"OS-natural": True, "OS-sage": True}),
    "P102": (
        "Cotton crew t-shirt",
        22.00,
        {"S-black": True, "M-black": True, "L-black": True, "M-white": True, "L-white": False},
    ),
    "P103": (
        "Merino wool sweater",
        89.00,
        {"M-navy": True, "L-navy": True, "M-grey": True, "L-grey": False},
    ),
    "P104": ("Trail running shoes", 119.95, {"9-blue": True, "10-blue": True, "11-blue": False}),
    "P105": ("Glass tumbler set of 4", 24.99, {"OS-clear": True}),
    "P106": ("LED desk lamp", 45.00, {"OS-black": True, "OS-brass": (True, 52.00)}),
    "P107": ("Wireless earbuds", 79.99, {"OS-black": True, "OS-white": True}),
    "P108": (
        "Steel water bottle 750ml",
        27.50,
        {"OS-blue": True, "OS-green": True, "OS-pink": True},
    ),
    "P109": ("Canvas tote bag", 16.00, {"OS-natural": True}),
    "P110": ("Yoga mat 6mm", 39.00, {"OS-purple": True, "OS-blue": True}),
    "P111": ("Cast iron skillet 10in", 34.95, {"OS-black": True}),
    "P112": ("Cedar scented candle", 12.75, {"OS-amber": True}),
    "P113": ("Phone case", 19.99, {"OS-blue": True, "OS-clear": True}),
    "P114": ("Throw pillow cover", 21.00, {"OS-blue": True, "OS-rust": True}),
    "P115": ("Hiking backpack 30L", 64.00, {"OS-green": True, "OS-black": True}),
    "P116": ("Stoneware dinner plate set", 42.00, {"OS-white": True}),
    "P117": ("French press 1L", 31.50, {"OS-steel": True}),
    "P118": ("Bluetooth speaker", 58.00, {"OS-black": True, "OS-red": True}),
    "P119": (
        "Kids raincoat",
        33.00,
        {"4-yellow": True, "6-yellow": True, "6-red": True, "4-red": False},
    ),
    "P120": ("Denim jacket", 74.00, {"S-indigo": True, "M-indigo": True, "L-indigo": True}),
    "P121": ("Wine glasses set of 2", 28.40, {"OS-clear": True}),
    "P122": ("Wool beanie", 17.25, {"OS-grey": True, "OS-blue": True}),
    "P123": ("Bamboo cutting board", 26.80, {"OS-natural": True}),
    "P124": ("Rain jacket", 96.00, {"M-olive": True, "L-olive": True, "M-navy": False}),
}
