"""Validates configs against rlgraph-rs's config schema with the `jsonschema` package (an
implementation independent of the Rust code that made the schema).

    python scripts/check_config_schema.py docs/config.schema.json < cases.json

reads a JSON list of configs on stdin and prints, for each, whether it is valid and every
error the validator finds with its deepest causes (instance path and message), as one JSON
list.
"""

import json
import sys

import jsonschema


def leaf_errors(error):
    """An error's deepest causes: an `if`/`then` or `anyOf` failure says why in its context."""
    if not error.context:
        yield error
        return
    for inner in error.context:
        yield from leaf_errors(inner)


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    verdicts = []
    for config in json.load(sys.stdin):
        errors = [
            {"path": "/".join(str(p) for p in e.absolute_path), "message": e.message}
            for error in validator.iter_errors(config)
            for e in [error, *leaf_errors(error)]
        ]
        verdicts.append({"valid": not errors, "errors": errors})
    json.dump(verdicts, sys.stdout)


if __name__ == "__main__":
    main()
