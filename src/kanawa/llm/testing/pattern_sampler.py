r"""Sampling one string that matches a simple regex, for ``pattern`` in
:func:`~kanawa.llm.testing.schema_values.value_for_schema`.

Supported: literals, ``.``, character classes, the escapes ``\d \D \w \W \s \S \t \n \r \f \v``,
``\uHHHH``/``\xHH``, groups (plain, ``(?:...)`` and named), alternation (the first branch is used),
the quantifiers ``* + ? {n} {n,} {n,m}`` (lazy and possessive too) and the anchors ``^``/``$``.
Anything else (lookarounds, inline flags, backreferences) makes :func:`sample_pattern` give up with
``None``; the caller then falls back to a plain string. The caller also re-checks the sample with
:func:`re.search`, so a wrong guess here can never produce an invalid value.
"""

from __future__ import annotations

import random
import re

_CHAR_POOL = "axZA0159_-. @/:\n\tあ"
"""Characters tried for classes and escapes (with the characters written in the class itself)."""


def sample_pattern(pattern: str, rng: random.Random) -> str | None:
    """One string matching ``pattern``, or ``None`` when the regex is beyond this small sampler."""
    return _Sampler(pattern, rng).sample()


class _Sampler:
    """Builds one string matching a simple regex, or gives up (``None``) on anything fancier.

    Each atom is sampled once and repeated its minimum count, which a repeated regex still matches.
    Characters for classes and escapes are found by testing a small pool against the atom itself.
    """

    def __init__(self, pattern: str, rng: random.Random) -> None:
        self._p, self._i, self._rng = pattern, 0, rng

    def sample(self) -> str | None:
        try:
            text = self._alternatives()
        except (ValueError, re.error):
            return None
        return text if self._i == len(self._p) else None

    def _alternatives(self) -> str:
        first = self._sequence()
        while self._i < len(self._p) and self._p[self._i] == "|":
            self._i += 1
            self._sequence()
        return first

    def _sequence(self) -> str:
        out: list[str] = []
        while self._i < len(self._p) and self._p[self._i] not in "|)":
            atom = self._atom()
            out.append(atom * self._quantifier())
        return "".join(out)

    def _atom(self) -> str:
        p, i = self._p, self._i
        char = p[i]
        if char in "^$":
            self._i += 1
            return ""
        if char == "(":
            named = re.match(r"\(\?(?::|P?<[A-Za-z_]\w*>)", p[i:])
            if p.startswith("(?", i) and not named:
                raise ValueError("lookaround or inline flags")
            self._i += len(named.group()) if named else 1
            inner = self._alternatives()
            if not p.startswith(")", self._i):
                raise ValueError("unbalanced group")
            self._i += 1
            return inner
        if char == "[":
            end = p.index("]", i + 2 if p.startswith("[^", i) else i + 1)
            while p[end - 1] == "\\":
                end = p.index("]", end + 1)
            return self._char_for(p[i : end + 1], end + 1)
        if char == "\\":
            escaped = p[i + 1 : i + 2]
            if escaped in ("u", "x"):
                width = 4 if escaped == "u" else 2
                self._i = i + 2 + width
                return chr(int(p[i + 2 : i + 2 + width], 16))
            if escaped.isalnum():
                if escaped not in "dDwWsStnrfv":
                    raise ValueError("unsupported escape")
                return self._char_for(p[i : i + 2], i + 2)
            self._i = i + 2
            return escaped
        if char in "*+?{":
            raise ValueError("quantifier without an atom")
        self._i = i + 1
        return self._char_for(".", i + 1) if char == "." else char

    def _char_for(self, atom: str, end: int) -> str:
        """A character the one-character regex ``atom`` matches: from a small pool, or from the
        characters written in a class (so ``[3-4]`` gives ``3``)."""
        compiled = re.compile(atom)
        candidates = _CHAR_POOL + atom.strip("[]^\\")
        choices = list(dict.fromkeys(c for c in candidates if compiled.fullmatch(c)))
        if not choices:
            raise ValueError("no candidate character matches")
        self._i = end
        return self._rng.choice(choices[:3])

    def _quantifier(self) -> int:
        p, i = self._p, self._i
        match = re.match(r"[*+?]|\{(\d+)(,\d*)?\}", p[i:])
        if match is None:
            return 1
        self._i += len(match.group())
        if self._i < len(p) and p[self._i] in "?+":
            self._i += 1  # lazy or possessive: same minimum
        symbol = match.group()
        return 1 if symbol == "+" else 0 if symbol in "*?" else int(match.group(1))
