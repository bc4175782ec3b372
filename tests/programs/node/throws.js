// An uncaught exception thrown from a timer callback, so it escapes to Node.
"use strict";

const limit = 3;

function check(value) {
  if (value > limit) {
    throw new RangeError("value " + value + " is above " + limit); // @mark throw
  }
  return value;
}

function tryCaught() {
  try {
    check(99); // @mark caught-call
  } catch (err) {
    return err.message;
  }
  return "no error";
}

console.log(tryCaught());
setTimeout(() => check(42), 5);
