// Loaded by app.ts after start, so its breakpoints resolve through a source map
// that the inspector only sees once the module is required.
export interface Point {
  x: number;
  y: number;
}

export function distance(a: Point, b: Point): number {
  const dx: number = b.x - a.x;
  const dy: number = b.y - a.y;
  const squared: number = dx * dx + dy * dy; // @mark distance-body
  return Math.sqrt(squared);
}
