// Runs a busy loop long enough to be paused, then exits on its own.
"use strict";

const deadline = Date.now() + 20000;
let spins = 0;

function spin() {
  while (Date.now() < deadline) {
    spins += 1; // @mark spin-body
  }
}

console.log("spinning");
spin();
console.log("spun", spins);
