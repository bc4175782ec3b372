"""A project's program: it needs a third-party package (tabulate) from its venv."""
import sys

import tabulate

rows = [["python", "%d.%d" % sys.version_info[:2]], ["executable", sys.executable]]
table = tabulate.tabulate(rows)  # @table
print(table)
