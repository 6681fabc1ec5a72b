#!/usr/bin/env python3
"""The walk with dlt's REST client: a page-number paginator that stops at
the declared number of pages (`meta.total_pages`)."""
import sys

from dlt.sources.helpers.rest_client import RESTClient
from dlt.sources.helpers.rest_client.paginators import PageNumberPaginator

base, size = sys.argv[1], int(sys.argv[2])
client = RESTClient(
    base_url=base,
    paginator=PageNumberPaginator(base_page=1, page_param="page", total_path="meta.total_pages"),
)
rows = sum(len(page) for page in client.paginate("/orders", params={"per_page": size},
                                                   data_selector="data"))
print(rows)
