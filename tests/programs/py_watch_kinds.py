"""A local, a global and items that change in place, and a frame that returns."""

TOTAL = 0
cart = {"total": 0, "items": []}
rows = [0, 0, 0, 0]


def add(item, price):
    global TOTAL
    cart["items"].append(item)  # LINE:append
    cart["total"] += price  # LINE:item
    TOTAL = TOTAL + price  # LINE:global


def fill(r):
    r[3] = 7  # LINE:row


def count():
    n = 0  # LINE:count_start
    for _ in range(3):
        n += 1  # LINE:local
    return n


add("pen", 3)  # LINE:calls
fill(rows)
print(count(), TOTAL, cart, rows)
