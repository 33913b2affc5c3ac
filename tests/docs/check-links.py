#!/usr/bin/env python3
"""Every relative link of README.md and docs/*.md leads to a file that exists, and every #anchor
to a heading of that file (GitHub's anchors: lower case, punctuation dropped, spaces as dashes;
headings inside code blocks do not count). Prints each broken link; exits 1 if there is one."""
import os
import re
import sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def anchor(heading):
    text = re.sub(r"^#+\s*", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(path):
    found, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                found.add(anchor(line))
    return found


pages = [os.path.join(root, "README.md")] + sorted(
    os.path.join(root, "docs", n) for n in os.listdir(os.path.join(root, "docs")) if n.endswith(".md"))
broken = 0
for page in pages:
    text = open(page, encoding="utf-8").read()
    for match in re.finditer(r"\]\(([^)\s]+)\)", text):
        link = match.group(1)
        if re.match(r"^[a-z]+:", link):
            continue
        path, _, frag = link.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        line = text.count("\n", 0, match.start()) + 1
        where = f"{os.path.relpath(page, root)}:{line}"
        if not os.path.exists(target):
            print(f"{where}: {link}: no such file")
            broken += 1
        elif frag and target.endswith(".md") and frag not in headings(target):
            print(f"{where}: {link}: no heading #{frag} in {os.path.relpath(target, root)}")
            broken += 1
print(f"check-links: {len(pages)} pages, {broken} broken links")
sys.exit(1 if broken else 0)
