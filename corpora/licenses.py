"""Recognising a repository's license from its license file: text markers → SPDX ids."""
from __future__ import annotations

import re
from collections.abc import Callable

LICENSE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENSE.rst", "COPYING", "COPYING.txt", "LICENCE")

#: Distinctive phrases of license texts → SPDX id (checked in order; the GPL family before its mentions).
_TEXT_MARKERS = [
    (re.compile(r"GNU AFFERO GENERAL PUBLIC LICENSE\s+Version 3", re.I), "AGPL-3.0"),
    (re.compile(r"GNU LESSER GENERAL PUBLIC LICENSE\s+Version 3", re.I), "LGPL-3.0"),
    (re.compile(r"GNU LESSER GENERAL PUBLIC LICENSE\s+Version 2\.1", re.I), "LGPL-2.1"),
    (re.compile(r"GNU GENERAL PUBLIC LICENSE\s+Version 3", re.I), "GPL-3.0"),
    (re.compile(r"GNU GENERAL PUBLIC LICENSE\s+Version 2", re.I), "GPL-2.0"),
    (re.compile(r"Mozilla Public License,?\s+Version 2\.0", re.I), "MPL-2.0"),
    (re.compile(r"Apache License,?\s+Version 2\.0", re.I), "Apache-2.0"),
    (re.compile(r"Permission is hereby granted, free of charge, to any person", re.I), "MIT"),
    (re.compile(r"Permission to use, copy, modify, and(/or)? distribute this software for any purpose", re.I), "ISC"),
    (re.compile(r"This is free and unencumbered software released into the public domain", re.I), "Unlicense"),
    (re.compile(r"PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2", re.I), "PSF-2.0"),
    (re.compile(r"Boost Software License - Version 1\.0", re.I), "BSL-1.0"),
]
_BSD = re.compile(r"Redistribution and use in source and binary forms", re.I)
_BSD_THIRD = re.compile(r"Neither the name of|endorse or promote products", re.I)


def license_from_text(text: str) -> str:
    """SPDX id recognised from a license file's text, or ``""``."""
    for pattern, spdx in _TEXT_MARKERS:
        if pattern.search(text):
            return spdx
    if _BSD.search(text):
        return "BSD-3-Clause" if _BSD_THIRD.search(text) else "BSD-2-Clause"
    return ""


def license_from_repo(read: Callable[[str], bytes | None]) -> tuple[str, str]:
    """``(spdx, file)`` from the first license file ``read(path)`` returns (e.g. ``RepoSource.read``)."""
    for name in LICENSE_FILES:
        data = read(name)
        if data:
            return license_from_text(data.decode("utf-8", errors="replace")), name
    return "", ""
