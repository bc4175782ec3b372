/* The C twin of inventory.py, for the native backends (lldb-dap, lldb-cli):
 * a struct with a nested array of structs, a loop and a few calls.
 * Build: gcc -g -O0 -o inventory examples/inventory.c */
#include <stdio.h>

struct item {
    const char *sku;
    double price;
    int quantity;
};

struct shelf {
    const char *name;
    struct item items[2];
    int count;
};

static int restock(struct item *item, int minimum) {
    int missing = minimum - item->quantity;
    if (missing > 0) {
        item->quantity += missing;
        return missing;
    }
    return 0;
}

static double total_value(const struct shelf *shelves, int n) {
    double total = 0.0;
    for (int s = 0; s < n; s++)
        for (int i = 0; i < shelves[s].count; i++)
            total += shelves[s].items[i].price * shelves[s].items[i].quantity;
    return total;
}

int main(void) {
    struct shelf shelves[3] = {
        {"A1", {{"TEA-01", 4.5, 12}, {"TEA-02", 3.9, 0}}, 2},
        {"B2", {{"MUG-10", 7.0, 5}, {"MUG-11", 7.0, 2}}, 2},
        {"C3", {{"PEN-99", 24.0, 1}}, 1},
    };
    double before = total_value(shelves, 3);
    int restocked = 0;
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < shelves[s].count; i++) {
            struct item *item = &shelves[s].items[i];
            int added = restock(item, 3);
            restocked += added;
            printf("%-8s qty=%d\n", item->sku, item->quantity);
        }
    }
    double after = total_value(shelves, 3);
    printf("value before=%.1f after=%.1f restocked=%d\n", before, after, restocked);
    return 0;
}
