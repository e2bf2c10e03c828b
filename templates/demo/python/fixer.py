"""The wfx demo agent for the Python sample: a scripted stand-in for an AI
fix agent, named "demo-fixer" in .workflow/wfx.json. Each call applies the
next fix of the sample project, so the loop shows more than one iteration.
"""

FIXES = [
    (
        "cart/pricing.py",
        "        total += price\n",
        "        total += price * quantity\n",
        "subtotal() now multiplies each price by its quantity (cart/pricing.py).",
    ),
    (
        "cart/discount.py",
        "percent / 10)",
        "percent / 100)",
        "apply_discount() takes the percentage of 100, not of 10 (cart/discount.py).",
    ),
]

for path, old, new, done in FIXES:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if old in text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        print(f"demo-fixer: {done}")
        break
else:
    print("demo-fixer: nothing left that I know how to fix.")
