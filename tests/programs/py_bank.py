"""A balance changed in three places: a callback reached through a dict, a
second thread, and the function that opened the account."""

import threading


class Account:
    def __init__(self, balance):
        self.balance = balance


def withdraw(acct, amount):
    acct.balance -= amount  # LINE:withdraw


def bonus(acct):
    acct.balance = acct.balance * 2  # LINE:bonus


HANDLERS = {"withdraw": withdraw}


def main():
    acct = Account(100)
    steps = 0  # LINE:opened
    HANDLERS["withdraw"](acct, 120)
    worker = threading.Thread(target=bonus, args=(acct,))
    worker.start()
    worker.join()
    acct.balance += 5  # LINE:deposit
    print("balance", acct.balance, steps)


main()
