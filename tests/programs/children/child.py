import sys

value = int(sys.argv[1])
doubled = value * 2  # @child
print("child", doubled)  # @child-print
