#!/bin/sh
# The wfx demo agent for the Rust sample: a scripted stand-in for an AI fix
# agent, named "demo-fixer" in .workflow/wfx.json. Each call applies the
# next fix of the sample project, so the loop shows more than one iteration.
set -e
if grep -q 'values.len() - 1' src/stats.rs; then
  sed 's/(values.len() - 1) as f64/values.len() as f64/' src/stats.rs > src/stats.rs.new
  mv src/stats.rs.new src/stats.rs
  echo "demo-fixer: mean() now divides by the number of values, not one less (src/stats.rs)."
elif grep -q 'a.abs() / b' src/lib.rs; then
  sed 's|a.abs() / b|a / b|' src/lib.rs > src/lib.rs.new
  mv src/lib.rs.new src/lib.rs
  echo "demo-fixer: divide() keeps the sign of the dividend (src/lib.rs)."
else
  echo "demo-fixer: nothing left that I know how to fix."
fi
