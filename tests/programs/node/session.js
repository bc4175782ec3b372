// A program the CDP backend tests walk through. Tests find lines by their
// "@mark" comments, so statements can move without breaking them.
"use strict";

const config = { name: "demo", sizes: [1, 2, 3], nested: { deep: true, label: "inner" } };

function add(a, b) {
  const sum = a + b; // @mark add-body
  return sum; // @mark add-return
}

function makeCounter(start) {
  let count = start;
  return function bump(step) {
    count += step; // @mark closure-body
    return count;
  };
}

function compute(values) {
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    total = add(total, values[i]); // @mark loop-call
  }
  return total; // @mark compute-return
}

function main() {
  const counter = makeCounter(10);
  const bumped = counter(5);
  const result = compute(config.sizes); // @mark main-compute
  const list = [result, bumped, "three"];
  console.log("result", result); // @mark main-log
  console.error("warning: almost done");
  process.stdout.write("raw write " + list.length + "\n");
  return result; // @mark main-return
}

main();
process.exitCode = 7;
