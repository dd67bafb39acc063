#!/usr/bin/env python3
"""Writes a copy of the attention spec whose BLOCK_N values include 256, with absolute paths, for A/B runs
outside the shipped space:  python3 tools/sdpa_bench/spec_bn256.py OUT.json"""
import json
import os
import sys

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "search_spaces")
s = json.load(open(os.path.join(here, "sdpa_fwd.json")))
s["params"]["BLOCK_N"] = s["params"]["BLOCK_N"] + [256]
s["template"] = os.path.abspath(os.path.join(here, s["template"]))
s["include_dirs"] = [os.path.abspath(os.path.join(here, d)) for d in s["include_dirs"]]
s["reference"]["template"] = os.path.abspath(os.path.join(here, s["reference"]["template"]))
json.dump(s, open(sys.argv[1], "w"))
