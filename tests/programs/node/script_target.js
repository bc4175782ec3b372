// The debug-script tests evaluate expressions at the marked line of this loop.
"use strict";

const items = [
  { id: 1, tags: ["a"] },
  { id: 2, tags: ["b", "c"] },
  { id: 3, tags: [] },
];

function visit(item, index) {
  if (item.id > 100) {
    return "out of range"; // @mark never
  }
  const label = "item-" + item.id;
  const ratio = item.id / 2;
  const flag = item.tags.length > 0;
  return label + ratio + flag; // @mark visit
}

let out = "";
items.forEach((item, index) => {
  out += visit(item, index);
});
console.log(out.length);
