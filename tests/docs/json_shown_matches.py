#!/usr/bin/env python3
"""Whether a JSON body a doc shows matches the body the server answered.

Usage: json_shown_matches.py SHOWN_FILE ACTUAL_FILE   (exit 0: matches, 1: not, with why)

A doc shows what a reader needs, not every member, so the shown JSON is a pattern:
  - an object matches an object that has every member it shows, each matching (members
    it leaves out are not checked);
  - an array matches an array of the same length, element by element; ["..."] matches
    any array, and a last element "..." any further elements;
  - a string matches a string, where "..." stands for any text and any id (a UUID) or
    RFC 3339 time in either is the same as any other;
  - numbers, booleans and null match themselves.
"""
import json
import re
import sys

ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z")


def normalise(text):
    return TIME.sub("<time>", ID.sub("<id>", text))


def string_matches(shown, actual):
    pattern = ".*".join(re.escape(part) for part in normalise(shown).split("..."))
    return re.fullmatch(pattern, normalise(actual), re.DOTALL) is not None


def mismatch(shown, actual, path="$"):
    """The first place where `actual` does not match `shown`, or None."""
    if isinstance(shown, dict):
        if not isinstance(actual, dict):
            return f"{path}: an object is shown, the answer has {json.dumps(actual)}"
        for name, value in shown.items():
            if name not in actual:
                return f"{path}.{name}: shown, but the answer has no such member"
            found = mismatch(value, actual[name], f"{path}.{name}")
            if found:
                return found
        return None
    if isinstance(shown, list):
        if not isinstance(actual, list):
            return f"{path}: an array is shown, the answer has {json.dumps(actual)}"
        open_ended = bool(shown) and shown[-1] == "..."
        items = shown[:-1] if open_ended else shown
        if len(actual) < len(items) or (not open_ended and len(actual) != len(items)):
            return f"{path}: {len(items)} elements shown, the answer has {len(actual)}"
        for index, value in enumerate(items):
            found = mismatch(value, actual[index], f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(shown, str):
        if isinstance(actual, str) and string_matches(shown, actual):
            return None
        return f"{path}: {json.dumps(shown)} is shown, the answer has {json.dumps(actual)}"
    if shown != actual or type(shown) is not type(actual):
        return f"{path}: {json.dumps(shown)} is shown, the answer has {json.dumps(actual)}"
    return None


def main():
    with open(sys.argv[1], encoding="utf-8") as file:
        shown_text = file.read()
    with open(sys.argv[2], encoding="utf-8") as file:
        actual_text = file.read()
    try:
        shown = json.loads(shown_text)
    except json.JSONDecodeError as error:
        print(f"the shown body is not JSON: {error}")
        return 1
    try:
        actual = json.loads(actual_text)
    except json.JSONDecodeError:
        print(f"the answer is not JSON: {actual_text[:500]}")
        return 1
    found = mismatch(shown, actual)
    if found:
        print(found)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
