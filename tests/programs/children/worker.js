// A Node child: doubles its argument and tells its parent.
const value = Number(process.argv[2]);
const doubled = value * 2;  // @worker
const answer = `child ${doubled}`;  // @worker-answer
if (process.send) {
  process.send(answer);
} else {
  console.log(answer);
}
