"""A small warehouse inventory: the program `tui-debugger run examples/inventory.py`
debugs in the README. Nested data (a dict of lists of objects), a dataclass, a
class with attributes, a loop and a few calls, so every pane has something to show."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    price: float
    quantity: int
    tags: list[str] = field(default_factory=list)

    def value(self) -> float:
        return self.price * self.quantity


class Warehouse:
    def __init__(self, name: str, city: str):
        self.name = name
        self.city = city
        self.shelves: dict[str, list[Item]] = {}
        self.restocked = 0

    def __repr__(self) -> str:
        return f"Warehouse({self.name!r}, {self.city!r}, shelves={len(self.shelves)})"

    def add(self, shelf: str, item: Item) -> None:
        self.shelves.setdefault(shelf, []).append(item)

    def items(self):
        for shelf in self.shelves.values():
            yield from shelf


def load_stock(warehouse: Warehouse) -> None:
    warehouse.add("A1", Item("TEA-01", "green tea", 4.5, 12, ["food", "organic"]))
    warehouse.add("A1", Item("TEA-02", "black tea", 3.9, 0, ["food"]))
    warehouse.add("B2", Item("MUG-10", "blue mug", 7.0, 5, ["kitchen"]))
    warehouse.add("B2", Item("MUG-11", "red mug", 7.0, 2, ["kitchen", "gift"]))
    warehouse.add("C3", Item("PEN-99", "fountain pen", 24.0, 1, ["office", "gift"]))


def restock(item: Item, minimum: int) -> int:
    missing = minimum - item.quantity
    if missing > 0:
        item.quantity += missing
        return missing
    return 0


def total_value(warehouse: Warehouse) -> float:
    total = 0.0
    for item in warehouse.items():
        total += item.value()
    return total


def main() -> int:
    warehouse = Warehouse("Central", "Lyon")
    load_stock(warehouse)
    summary = {"before": round(total_value(warehouse), 2), "restocked": []}
    for item in warehouse.items():
        added = restock(item, minimum=3)
        if added:
            warehouse.restocked += added
            summary["restocked"].append(item.sku)
        print(f"{item.sku:8} {item.name:14} qty={item.quantity}")
    summary["after"] = round(total_value(warehouse), 2)
    print(f"value before={summary['before']} after={summary['after']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
