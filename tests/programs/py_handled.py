def work(n):
    total = n * 2
    items = [1, 2, 3]
    return total + sum(items)  # @sum


print("result", work(3))
try:
    raise ValueError("handled on purpose")  # @raise
except ValueError:
    pass
print("done")
