"""Seed 002 §4 GuardAgent ``plagiarism_check``: 0.28–0.4 → warn, > 0.4 → block, on constructed cases —
verbatim, lightly edited, half copied, a third copied, paraphrased, same topic — plus NFKC, the matching
passages and the MinHash LSH path for large corpora."""

from __future__ import annotations

import pytest

from kanawa.apps.smartao.plagiarism import (
    PlagiarismIndex,
    SourceDocument,
    normalize,
    verdict,
)

SOURCE = (
    "私が地域医療に関心を持ったきっかけは、祖母が暮らす山あいの村で診療所が閉鎖されたことである。"
    "祖母は持病の検査のために片道二時間かけて町の病院へ通うようになり、通院のたびに体力を消耗していた。"
    "私はこの経験から、医師の数だけでなく、患者が医療にたどり着くまでの距離そのものが健康を左右すると考えた。"
    "オンライン診療や巡回診療を組み合わせれば、住み慣れた土地で暮らし続けられる人が増えるはずである。"
    "貴学の医療政策学科で、遠隔医療の制度設計と費用負担の在り方を学び、過疎地の医療を支える仕組みを提案したい。"
)
OWN = (
    "私は高校の吹奏楽部で部長を務め、六十人の部員の練習計画を立てた。"
    "パートごとに上達の速さが違うため、全員に同じ練習を課すと不満が生まれることに気づいた。"
    "そこで各パートの代表と毎週話し合い、目標と練習量を調整する仕組みを作ったところ、"
    "定期演奏会では過去最多の来場者を迎えることができた。組織の中で人の声を聞く大切さを学んだ。"
)
LIGHTLY_EDITED = (
    SOURCE.replace("祖母", "祖父")
    .replace("二時間", "２時間")
    .replace("考えた", "思った")
    .replace("はずである", "はずだ")
    .replace("提案したい", "考えたい")
)
PARAPHRASED = (
    "山間部の集落から診療所がなくなると、住民は遠くの病院まで長い時間をかけて通院しなければならない。"
    "医療を受けるまでの道のりが遠いこと自体が、人々の健康を損なう原因になりうる。"
    "遠隔での診察や医師が地域を回る仕組みを取り入れれば、高齢者が故郷で生活を続けやすくなるだろう。"
    "大学では、こうした仕組みを制度として成り立たせるための費用の分担方法を研究したい。"
)
SAME_TOPIC = (
    "日本の地方では医師不足が深刻であり、特に小児科や産婦人科の医師が少ない地域が多い。"
    "医学部の地域枠を増やすことや、若手医師が地方で働くための研修制度を充実させることが必要だと私は考える。"
    "私自身も将来は地元の病院で働き、地域の子どもたちの健康を守りたい。"
)


@pytest.fixture(scope="module")
def index() -> PlagiarismIndex:
    return PlagiarismIndex(
        [
            SourceDocument(id="prior-medical", title="過去の志望理由書", text=SOURCE),
            SourceDocument(
                id="other", title="別の文章", text="環境問題の解決には一人ひとりの行動の変化が必要である。"
            ),
        ]
    )


def third_copied() -> str:
    return SOURCE[:85] + OWN + OWN[:30]


@pytest.mark.parametrize(
    ("case", "essay", "expected"),
    [
        ("verbatim", SOURCE, "block"),
        ("lightly edited", LIGHTLY_EDITED, "block"),
        ("half copied", SOURCE[: len(SOURCE) // 2] + OWN, "block"),
        ("a third copied", third_copied(), "warn"),
        ("paraphrased", PARAPHRASED, "pass"),
        ("same topic", SAME_TOPIC, "pass"),
        ("own essay", OWN, "pass"),
    ],
)
def test_seed_thresholds_on_constructed_cases(
    index: PlagiarismIndex, case: str, essay: str, expected: str
) -> None:
    report = index.check(essay)
    assert report.verdict == expected, (case, report.score)
    if expected != "pass":
        assert report.matches[0].source_id == "prior-medical"
        assert 0 < report.jaccard <= report.score


def test_thresholds_are_the_seeds_bounds() -> None:
    assert [verdict(s) for s in (0.0, 0.279, 0.28, 0.4, 0.4001, 1.0)] == [
        "pass",
        "pass",
        "warn",
        "warn",
        "block",
        "block",
    ]


def test_matching_passages_point_at_the_copied_text_in_the_essay(index: PlagiarismIndex) -> None:
    essay = third_copied()
    report = index.check(essay)
    passages = report.matches[0].passages
    assert passages[0].start == 0
    assert passages[0].text == essay[passages[0].start : passages[0].end]
    assert SOURCE[:80] in passages[0].text
    assert all(OWN[10:40] not in p.text for p in passages)


def test_nfkc_folds_full_width_and_whitespace_and_keeps_offsets() -> None:
    text, origin = normalize("ＡＢＣ １２３ ｶﾀｶﾅ")
    assert text == "abc123カタカナ"
    assert origin[:4] == [0, 1, 2, 4]
    index = PlagiarismIndex([SourceDocument(id="s", text=SOURCE)])
    spaced = " ".join(SOURCE[i : i + 20] for i in range(0, len(SOURCE), 20))
    assert index.check(spaced).score == 1.0


def test_large_corpora_use_minhash_lsh_and_find_the_same_source() -> None:
    filler = [
        SourceDocument(
            id=f"essay-{n}",
            text=f"第{n}の作文。" + OWN[n % 40 :] + SOURCE[n * 3 : n * 3 + 12] + PARAPHRASED[: 40 + n % 50],
        )
        for n in range(60)
    ]
    corpus = [*filler, SourceDocument(id="prior-medical", text=SOURCE)]
    lsh = PlagiarismIndex(corpus, lsh_min_corpus=10)
    exact = PlagiarismIndex(corpus, lsh_min_corpus=1000)
    for essay in (SOURCE, LIGHTLY_EDITED, SOURCE[: len(SOURCE) // 2] + SAME_TOPIC):
        fast, full = lsh.check(essay), exact.check(essay)
        assert fast.method == "lsh"
        assert full.method == "exact"
        assert fast.matches[0].source_id == full.matches[0].source_id == "prior-medical"
        assert fast.score == full.score
        assert fast.candidates < full.candidates


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="n >= 2"):
        PlagiarismIndex([], n=1)
    with pytest.raises(ValueError, match="two documents"):
        PlagiarismIndex([SourceDocument(id="a", text="x"), SourceDocument(id="a", text="y")])
    assert PlagiarismIndex([]).check("").verdict == "pass"
