// TypeScript whose compiled JavaScript the tests run; breakpoints are set here.
import { distance, Point } from "./geometry";

interface Person {
  name: string;
  age: number;
}

type Greeting = { text: string; length: number };

function greet(person: Person): Greeting {
  const text: string = `Hello, ${person.name} (${person.age})`; // @mark greet-body
  return { text, length: text.length };
}

const people: Person[] = [ // @mark people
  { name: "Ada", age: 36 },
  { name: "Linus", age: 28 },
];

for (const person of people) {
  const greeting: Greeting = greet(person);
  console.log(greeting.text); // @mark loop-log
}

const origin: Point = { x: 0, y: 0 };
console.log("distance", distance(origin, { x: 3, y: 4 }));
