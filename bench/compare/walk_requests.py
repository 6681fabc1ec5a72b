#!/usr/bin/env python3
"""The walk as a user would write it with requests: page after page until
the rows reach the declared total or a page comes back short."""
import sys

import requests

base, size = sys.argv[1], int(sys.argv[2])
session = requests.Session()
rows, page = [], 1
while True:
    body = session.get(base + "/orders", params={"page": page, "per_page": size}).json()
    rows.extend(body["data"])
    if len(body["data"]) < size or len(rows) >= body["meta"]["total"]:
        break
    page += 1
print(len(rows))
