"""Prices computed in ProcessPoolExecutor workers; one of them is wrong, and
only a worker's locals show why."""
from concurrent.futures import ProcessPoolExecutor


def price(item):
    qty, unit = item  # @price
    total = qty * unit
    if qty > 2:
        total -= unit  # @discount
    return total  # @return


def main():
    items = [(1, 10), (2, 5), (3, 7)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        totals = list(pool.map(price, items))
    print("totals", totals, "sum", sum(totals))  # @report


if __name__ == "__main__":
    main()
