#!/usr/bin/env python3
"""Deterministic data for bench/compare/run.sh.

Writes into DIR:
- pages/orders-N.json for N = 1..PAGES: `{"data": [...SIZE orders], "meta":
  {"total": PAGES*SIZE, "total_pages": PAGES, "page": N, "per_page": SIZE}}`,
  served by nginx as
  GET /orders?page=N&per_page=SIZE;
- big.json: one page of ROWS orders (about 24 MB), `{"data": [...]}`.
The same seed always gives the same bytes.
"""
import json
import os
import random
import sys

FIRST = ["Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro"]
LAST = ["Almeida", "Berg", "Costa", "Duval", "Eriksen", "Fischer", "Garcia"]
STATUS = ["open", "paid", "shipped", "cancelled"]


def order(rng, i):
    return {
        "id": i,
        "status": rng.choice(STATUS),
        "total": round(rng.uniform(5, 2000), 2),
        "currency": "EUR",
        "created_at": "2026-%02d-%02dT%02d:%02d:00Z"
        % (rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)),
        "customer": {
            "id": rng.randint(1, 400),
            "name": "%s %s" % (rng.choice(FIRST), rng.choice(LAST)),
            "email": "c%d@example.com" % rng.randint(1, 400),
        },
        "lines": [
            {"sku": "SKU-%04d" % rng.randint(1, 9999), "qty": rng.randint(1, 5),
             "price": round(rng.uniform(1, 400), 2)}
            for _ in range(rng.randint(1, 4))
        ],
        "notes": "n" * rng.randint(30, 150),
    }


def main():
    out, pages, size, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(2026)
    os.makedirs(os.path.join(out, "pages"), exist_ok=True)
    total = pages * size
    for n in range(1, pages + 1):
        data = [order(rng, (n - 1) * size + k + 1) for k in range(size)]
        meta = {"total": total, "total_pages": pages, "page": n, "per_page": size}
        body = {"data": data, "meta": meta}
        with open(os.path.join(out, "pages", "orders-%d.json" % n), "w") as f:
            json.dump(body, f, separators=(",", ":"))
    rng = random.Random(24)
    with open(os.path.join(out, "big.json"), "w") as f:
        f.write('{"data":[')
        for i in range(rows):
            if i:
                f.write(",")
            json.dump(order(rng, i + 1), f, separators=(",", ":"))
        f.write("]}")


if __name__ == "__main__":
    main()
