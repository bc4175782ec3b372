"""A parent that runs another Python program with subprocess.run."""
import subprocess
import sys

subprocess.run([sys.executable, "child.py", "7"], check=True)
print("parent done")
