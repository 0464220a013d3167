// SmartAO coaching page: starts a "smartao" run on /v1/runs, follows its SSE chunks (resuming with
// Last-Event-ID after a dropped connection), shows each agent's findings, and applies the changes the
// user accepts. Every offset is a Unicode code point (Python's str index): text is sliced through
// Array.from(), never with JS string indices (UTF-16 units).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const AGENTS = ["GuardAgent", "StyleAgent", "DraftAgent", "RefAgent", "Coordinator", "EvalAgent"];

  // ---------------------------------------------------------------- words (Japanese, English)
  const WORDS = {
    ja: {
      title: "志望理由書コーチ", skip: "本文へ移動", demo: "デモ出力", keyHeading: "API キー",
      keyHelp: "kanawa smartao serve が表示したキーを入力してください。", keyLabel: "API キー",
      keyUse: "このキーを使う", tenantLabel: "テナント", switchHeading: "API キーの切り替え",
      switchText: (current, offered) => `このリンクには別の API キー（${offered ? `テナント「${offered}」` : "このサーバーが受け付けないキー"}）が含まれています。`
        + `いまのテナント「${current || "不明"}」のまま使いますか、切り替えますか？`
        + "切り替えると、エッセイはそのテナントに送られ、その管理者が読めるようになります。",
      switchKeep: "今のキーを使い続ける", switchYes: "新しいキーに切り替える", formHeading: "エッセイと志望先", sampleLabel: "サンプルを読み込む",
      sampleNone: "（選択しない）", kindLabel: "種類", kindShibou: "志望理由書", kindShoronbun: "小論文",
      essayLabel: "エッセイ本文", essayHelp: "見出し（■ など）はそのまま残ります。", schoolLegend: "志望先",
      schoolLabel: "大学・学部のサンプル", schoolNone: "（自分で入力）", universityLabel: "大学",
      facultyLabel: "学部", policyLabel: "アドミッション・ポリシー", run: "コーチングを開始",
      resultsHeading: "結果", agentsLabel: "エージェントの進み具合",
      textHeading: "本文（指摘と採用した修正）",
      textHelp: "黄色は表記の指摘、取り消し線と下線は採用した修正です。", styleHeading: "表記の指摘",
      draftHeading: "深掘りの提案", guardHeading: "類似度チェック", guardViewLabel: "一致した箇所",
      refHeading: "参考資料", evalHeading: "ルーブリック評価", scoresCaption: "観点ごとの点数と理由",
      axis: "観点", score: "点数", reason: "理由", usageHeading: "使用量と費用",
      timeline: "このランのタイムラインを開く", download: "PatchJSON をダウンロード",
      footer: "採点と提案は目安です。最終的な文章はご自身で確認してください。",
      accept: "採用", reject: "却下", noFix: "自動の修正案はありません", replaceWith: "修正案",
      deleteIt: "削除", insertAfter: "次の文の後に追加", notPlaced: "本文中に挿入位置が見つからないため、修正案にはなっていません", dropped: "他の修正と重なるため統合されませんでした",
      waiting: "待機中", running: "実行中", done: "完了", skipped: "実行されず",
      starting: "コーチングを始めています…", agentDone: (a) => `${a} が終わりました`,
      agentStart: (a) => `${a} が作業中です`,
      completed: "完了しました。修正を採用・却下して PatchJSON をダウンロードできます。",
      failed: "ランが失敗しました", cancelled: "ランは取り消されました",
      reconnecting: (n) => `接続が切れました。再接続しています（${n} 回目）…`,
      gaveUp: "再接続できませんでした。時間をおいて再読み込みしてください。",
      needKey: "API キーが必要です。", badKey: "この API キーは使えません。", emptyEssay: "エッセイを入力してください。",
      issues: (n, engine) => `${n} 件の指摘（${engine}）`, noIssues: "表記の指摘はありません。",
      headingsKept: "（見出しの行は、どの修正案でも変わりません）",
      similarity: (s, v) => `既存の文章との一致率 ${s}％：${v}`,
      verdict: { pass: "問題なし", warn: "注意（一致している箇所を自分の言葉で書き直しましょう）", block: "要修正（このままでは提出できません）" },
      matches: (t) => `一致した資料：${t}`, noRefs: "参考資料は見つかりませんでした。",
      refScore: (s) => `類似度 ${s}`, cached: "（前回の評価を再利用）",
      inputTokens: "入力トークン", outputTokens: "出力トークン", requests: "リクエスト数", cost: "費用",
      costUnknown: "不明（料金表にないモデル）", chartTitle: "ルーブリックのレーダーチャート",
      chartDesc: (s) => `7 観点の点数（5 点満点）：${s}`, guardrail: (m) => `予算の警告：${m}`,
      accepted: (n) => `${n} 件の修正を採用しています`,
      errors: {
        GuardrailViolation: "チェックによりランが止まりました（類似度チェックなどの結果を確認してください）",
        EssayInputError: "入力が正しくありません（エッセイと志望先を確認してください）",
        BudgetExceeded: "利用できる予算の上限に達しました",
        LLMCallFailed: "モデルを呼び出せませんでした（再試行と代わりのモデルでも失敗しました）",
        HandoffDepthExceeded: "エージェントの受け渡しが深くなりすぎました",
        MaxStepsExceeded: "ステップ数の上限に達しました",
        chunks_expired: "このランの記録は保存期間を過ぎました",
        internal_error: "サーバー内部でエラーが起きました",
      },
      otherError: "サーバーがエラーを返しました",
      runError: (code) => `ランが失敗しました：${WORDS.ja.errors[code] || WORDS.ja.otherError}`,
      startFailed: (status) => `ランを始められませんでした（HTTP ${status}）`,
    },
    en: {
      title: "Admissions essay coach", skip: "Skip to content", demo: "Demo output", keyHeading: "API key",
      keyHelp: "Enter the key that kanawa smartao serve printed.", keyLabel: "API key", keyUse: "Use this key",
      tenantLabel: "Tenant", switchHeading: "Switch API key?",
      switchText: (current, offered) => `This link carries another API key (${offered ? `tenant “${offered}”` : "a key this server does not accept"}). `
        + `Keep using tenant “${current || "unknown"}”, or switch? `
        + "After switching, your essays go to that tenant, whose operators can read them.",
      switchKeep: "Keep the current key", switchYes: "Switch to the new key",
      formHeading: "Essay and target school", sampleLabel: "Load a sample", sampleNone: "(none)",
      kindLabel: "Kind", kindShibou: "Statement of purpose", kindShoronbun: "Short essay", essayLabel: "Essay",
      essayHelp: "Headings (■ …) are always kept.", schoolLegend: "Target school",
      schoolLabel: "Sample university/faculty", schoolNone: "(type your own)", universityLabel: "University",
      facultyLabel: "Faculty", policyLabel: "Admission policy", run: "Start coaching",
      resultsHeading: "Results", agentsLabel: "Agent progress",
      textHeading: "Text (issues and accepted changes)",
      textHelp: "Yellow marks style issues; struck-through and underlined text shows accepted changes.",
      styleHeading: "Style issues", draftHeading: "Deepening suggestions", guardHeading: "Similarity check",
      guardViewLabel: "Matching passages", refHeading: "References", evalHeading: "Rubric evaluation",
      scoresCaption: "Score and reason per axis", axis: "Axis", score: "Score", reason: "Reason",
      usageHeading: "Usage and cost", timeline: "Open this run's timeline", download: "Download PatchJSON",
      footer: "Scores and suggestions are guidance; check your final text yourself.",
      accept: "Accept", reject: "Reject", noFix: "No automatic fix", replaceWith: "Fix",
      deleteIt: "delete", insertAfter: "Add after", notPlaced: "Its place in the text was not found, so it is not a change", dropped: "Overlaps another change; not merged",
      waiting: "waiting", running: "running", done: "done", skipped: "not run",
      starting: "Starting the coaching run…", agentDone: (a) => `${a} finished`,
      agentStart: (a) => `${a} is working`,
      completed: "Done. Accept or reject the changes, then download the PatchJSON.",
      failed: "The run failed", cancelled: "The run was cancelled",
      reconnecting: (n) => `Connection lost; reconnecting (attempt ${n})…`,
      gaveUp: "Could not reconnect. Reload the page later.",
      needKey: "An API key is needed.", badKey: "This API key is not accepted.", emptyEssay: "Enter an essay.",
      issues: (n, engine) => `${n} issues (${engine})`, noIssues: "No style issues.",
      headingsKept: "(No change alters a heading line.)",
      similarity: (s, v) => `Overlap with existing texts: ${s}% — ${v}`,
      verdict: { pass: "fine", warn: "warning (rewrite the matching passages in your own words)", block: "blocked (cannot be submitted as is)" },
      matches: (t) => `Matching source: ${t}`, noRefs: "No references found.",
      refScore: (s) => `similarity ${s}`, cached: "(reused from an earlier evaluation)",
      inputTokens: "Input tokens", outputTokens: "Output tokens", requests: "Requests", cost: "Cost",
      costUnknown: "unknown (model not in the price table)", chartTitle: "Rubric radar chart",
      chartDesc: (s) => `Scores on 7 axes (out of 5): ${s}`, guardrail: (m) => `Budget warning: ${m}`,
      accepted: (n) => `${n} changes accepted`,
      errors: {
        GuardrailViolation: "A check stopped the run (see the similarity check and the other results)",
        EssayInputError: "The input is not valid (check the essay and the school)",
        BudgetExceeded: "The usage budget has been spent",
        LLMCallFailed: "The model could not be reached (retries and the fallback model failed too)",
        HandoffDepthExceeded: "The agents handed the work on too many times",
        MaxStepsExceeded: "The run reached its step limit",
        chunks_expired: "This run's record is past its retention time",
        internal_error: "The server had an internal error",
      },
      otherError: "The server reported an error",
      runError: (code) => `The run failed: ${WORDS.en.errors[code] || WORDS.en.otherError}`,
      startFailed: (status) => `The run could not start (HTTP ${status})`,
    },
  };
  let lang = sessionStorage.getItem("smartao-lang") === "en" ? "en" : "ja";
  const t = (key, ...args) => {
    const value = WORDS[lang][key];
    return typeof value === "function" ? value(...args) : value;
  };
  // Japanese inside the page's text: the essay, quotes from it, what the agents wrote. It is marked
  // lang="ja" (screen readers read it as Japanese; the English page shows it as it was written).
  const JAPANESE = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]/;
  const langOf = (text) => (JAPANESE.test(text || "") ? "ja" : undefined);
  /** `text` as nodes, each “quoted” Japanese part in a lang="ja" span (issue messages quote the essay). */
  function quoted(text) {
    return String(text).split(/(“[^”]*”)/).filter(Boolean)
      .map((part) => (part.startsWith("“") && langOf(part) ? el("span", { lang: "ja", text: part }) : part));
  }
  let axesEn = new Map(); // rubric axis → its English name (from samples.json)
  const axisName = (axis) => (lang === "en" && axesEn.get(axis)) || axis;
  const issueText = (issue) => (issue.messages && issue.messages[lang]) || issue.message;

  // ---------------------------------------------------------------- the API key (as on every page)
  // The tab's key, handled by the script every kanawa page loads (/page/key.js, before this one): a
  // #key= in a link never silently replaces it (a link could otherwise send the user's essay to
  // another tenant). The page asks first, in its own language, naming both tenants, and sends nothing
  // with either key before the person has chosen; the tenant of the key in use is always shown.
  const keys = window.kanawaKey;
  const auth = () => (keys.get() ? { Authorization: "Bearer " + keys.get() } : {});
  function askKey(key) {
    $("keybox").hidden = false;
    showAlert(key);
    $("key").focus();
  }
  $("keygo").addEventListener("click", () => {
    keys.set($("key").value.trim());
    $("keybox").hidden = true;
    hideAlert();
    keys.showTenant();
    checkDemo();
  });

  // ---------------------------------------------------------------- code points
  const points = (text) => Array.from(text);
  const slice = (cps, start, end) => cps.slice(start, end).join("");
  /** The original with `changes` (a canonical change_map subset) applied: what PatchJSON.apply does. */
  function applyChanges(original, changes) {
    const cps = points(original);
    const out = [];
    let cursor = 0;
    for (const change of changes) {
      out.push(slice(cps, cursor, change.start), change.text || "");
      cursor = change.end;
    }
    out.push(slice(cps, cursor, cps.length));
    return out.join("");
  }

  // ---------------------------------------------------------------- state of one run
  let run = null;
  function freshRun(request) {
    return {
      id: null, request, original: request.essay, lastSeq: 0, finished: false, status: "running",
      issues: [], engine: "", styleChanges: [], merged: null, dropped: 0, draft: null,
      plagiarism: null, references: [], rubric: null, rubricCached: false, usage: null, cost: undefined,
      decisions: new Map(), agents: new Map(), texts: new Map(), demo: false,
    };
  }
  const changeKey = (c) => `${c.start}:${c.end}:${c.text == null ? "" : c.text}`;
  /** Every change the user can decide on, in canonical order: the merged change_map once it arrived,
   * Style's own changes before that (Style's changes win every overlap, so they are all merged). */
  function candidates() {
    if (run.merged) return run.merged.change_map;
    return run.styleChanges;
  }
  const accepted = () => candidates().filter((c) => run.decisions.get(changeKey(c)) === "accept");

  // ---------------------------------------------------------------- rendering helpers
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }
  // the status line and the alert are kept as words and their arguments, so the language toggle
  // can say them again in the other language
  let said = null, alerted = null;
  function announce(key, ...args) { said = [key, args]; $("status").textContent = t(key, ...args); }
  /** An alert in the page's words; `detail` (the server's own message, English) is its tooltip. */
  function showAlert(key, args = [], detail = "") {
    alerted = [key, args];
    $("alert").textContent = t(key, ...args);
    $("alert").title = detail;
    $("alert").hidden = false;
  }
  function hideAlert() {
    alerted = null;
    $("alert").hidden = true; $("alert").textContent = ""; $("alert").title = "";
  }

  function applyWords() {
    document.documentElement.lang = lang;
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    for (const node of document.querySelectorAll("[data-i18n-aria]")) node.setAttribute("aria-label", t(node.dataset.i18nAria));
    document.title = "SmartAO " + t("title");
    $("lang").textContent = lang === "ja" ? "English" : "日本語";
    $("lang").setAttribute("lang", lang === "ja" ? "en" : "ja");
    $("lang").setAttribute("aria-pressed", String(lang === "en"));
    if (said) $("status").textContent = t(said[0], ...said[1]);
    if (alerted) $("alert").textContent = t(alerted[0], ...alerted[1]);
    const asked = keys.asking();
    if (asked) $("switch-text").textContent = t("switchText", ...asked);
    for (const option of document.querySelectorAll("#sample option[data-ja], #school option[data-ja]")) {
      option.textContent = lang === "en" ? option.dataset.en : option.dataset.ja;
    }
    if (run) renderAll();
  }
  $("lang").addEventListener("click", () => {
    lang = lang === "ja" ? "en" : "ja";
    sessionStorage.setItem("smartao-lang", lang);
    applyWords();
  });

  /** The essay with highlights: `marks` are {start, end, cls, title} spans; accepted changes are shown
   * as <del>/<ins>. All positions are code points into the original. */
  function renderText(container, original, marks, changes) {
    const cps = points(original);
    const cuts = new Set([0, cps.length]);
    for (const m of marks) { cuts.add(m.start); cuts.add(m.end); }
    for (const c of changes) { cuts.add(c.start); cuts.add(c.end); }
    const sorted = [...cuts].filter((p) => p >= 0 && p <= cps.length).sort((a, b) => a - b);
    container.replaceChildren();
    if (langOf(original)) container.setAttribute("lang", "ja"); else container.removeAttribute("lang");
    for (let i = 0; i < sorted.length; i++) {
      const at = sorted[i];
      for (const c of changes) if (c.end === at && c.start < c.end && c.text) container.append(el("ins", { text: c.text }));
      for (const c of changes) if (c.start === at && c.start === c.end) container.append(el("ins", { text: c.text }));
      if (i === sorted.length - 1) break;
      const next = sorted[i + 1];
      const piece = slice(cps, at, next);
      const covering = marks.filter((m) => m.start <= at && next <= m.end);
      let node = document.createTextNode(piece);
      if (changes.some((c) => c.start <= at && next <= c.end && c.start < c.end)) node = el("del", {}, node);
      if (covering.length) {
        node = el("mark", { class: covering[0].cls, title: covering.map((m) => m.title).join(" / ") }, node);
      }
      container.append(node);
    }
  }

  function decisionButtons(change) {
    const key = changeKey(change);
    const state = run.decisions.get(key);
    const box = el("div", { class: "buttons", role: "group" });
    for (const choice of ["accept", "reject"]) {
      const button = el("button", {
        type: "button", class: `${choice} secondary`, "aria-pressed": String(state === choice),
        "data-change": key, text: t(choice),
      });
      button.addEventListener("click", () => {
        run.decisions.set(key, state === choice ? undefined : choice);
        renderAll();
        announce("accepted", accepted().length);
        const again = document.querySelector(`button.${choice}[data-change="${CSS.escape(key)}"]`);
        if (again) again.focus();
      });
      box.append(button);
    }
    return box;
  }

  function describe(change) {
    const cps = points(run.original);
    const before = slice(cps, change.start, change.end);
    if (change.start === change.end) return el("span", {}, `${t("insertAfter")}: `, el("span", { class: "suggestion", lang: langOf(change.text), text: change.text }));
    if (!change.text) return el("span", {}, `${t("replaceWith")}: `, el("del", { lang: langOf(before), text: before }), ` → ${t("deleteIt")}`);
    return el("span", {}, `${t("replaceWith")}: `, el("del", { lang: langOf(before), text: before }), " → ", el("ins", { lang: langOf(change.text), text: change.text }));
  }

  function renderStyle() {
    const list = $("style-list");
    list.replaceChildren();
    if (!run.agents.has("StyleAgent") && !run.issues.length) return;
    $("style-note").textContent = run.issues.length ? t("issues", run.issues.length, run.engine) : (run.agents.get("StyleAgent") === "done" ? t("noIssues") : "");
    // each Style change is listed under the narrowest issue that contains it (issues may nest)
    const owner = new Map();
    for (const change of candidates().filter((c) => run.styleKeys.has(changeKey(c)))) {
      let best = -1;
      run.issues.forEach((issue, index) => {
        if (issue.start <= change.start && change.end <= issue.end
            && (best < 0 || issue.end - issue.start < run.issues[best].end - run.issues[best].start)) best = index;
      });
      if (best >= 0) owner.set(change, best);
    }
    run.issues.forEach((issue, index) => {
      const item = el("li", { id: `issue-${index}` }, el("strong", { title: issue.message }, ...quoted(issueText(issue))),
        " ", el("span", { class: "by", text: `(${issue.rule})` }));
      const fixes = [...owner].filter(([, at]) => at === index).map(([change]) => change);
      if (fixes.length) for (const fix of fixes) item.append(el("div", {}, describe(fix)), decisionButtons(fix));
      else item.append(el("div", { class: "note", text: t("noFix") }));
      list.append(item);
    });
  }

  function renderDraft() {
    const list = $("draft-list");
    list.replaceChildren();
    if (!run.draft) return;
    const note = run.draft.note ? el("span", { lang: langOf(run.draft.note), text: run.draft.note }) : null;
    $("draft-note").replaceChildren(...(note ? [note, " "] : []), t("headingsKept"));
    const draftChanges = run.draftChanges || [];
    const merged = run.merged ? new Set(run.merged.change_map.map(changeKey)) : null;
    const placed = new Set();
    run.draft.suggestions.forEach((suggestion) => {
      const item = el("li", {}, el("div", {}, `${t("insertAfter")}: `, el("q", { lang: langOf(suggestion.after), text: suggestion.after })),
        el("div", { class: "suggestion", lang: langOf(suggestion.text), text: suggestion.text }));
      // the draft patch holds one insert per suggestion it could place (in text order, not list order)
      const change = draftChanges.find((c) => c.text === suggestion.text && !placed.has(c));
      if (change) placed.add(change);
      if (!change) item.append(el("div", { class: "note", text: t("notPlaced") }));
      else if (merged) {
        if (merged.has(changeKey(change))) item.append(decisionButtons(change));
        else item.append(el("div", { class: "note", text: t("dropped") }));
      }
      list.append(item);
    });
  }

  function renderGuard() {
    const report = run.plagiarism;
    const view = $("guard-view");
    if (!report) { $("guard-summary").textContent = ""; view.hidden = true; return; }
    const percent = Math.round(report.score * 100);
    const summary = $("guard-summary");
    summary.className = report.verdict === "pass" ? "" : report.verdict;
    summary.textContent = t("similarity", percent, t("verdict")[report.verdict]);
    const passages = [];
    for (const match of report.matches || []) {
      for (const p of match.passages || []) passages.push({ start: p.start, end: p.end, cls: "copied", title: t("matches", match.title) });
    }
    view.hidden = report.verdict === "pass" || passages.length === 0;
    if (!view.hidden) renderText(view, run.original, passages, []);
  }

  function renderRefs() {
    const list = $("ref-list");
    list.replaceChildren();
    if (!run.agents.has("RefAgent")) return;
    if (!run.references.length && run.agents.get("RefAgent") === "done") list.append(el("li", { text: t("noRefs") }));
    for (const ref of run.references) {
      list.append(el("li", {}, el("strong", { lang: langOf(ref.title), text: ref.title }), ` (${t("refScore", ref.score.toFixed(2))})`,
        el("div", { class: "note", lang: langOf(ref.text), text: ref.text })));
    }
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    return node;
  }
  function renderRubric() {
    const chart = $("chart");
    const body = $("scores").querySelector("tbody");
    chart.replaceChildren();
    body.replaceChildren();
    if (!run.rubric) { $("eval-summary").textContent = ""; return; }
    const scores = run.rubric.scores;
    const n = scores.length;
    const cx = 240, cy = 165, radius = 105;
    const corner = (i, r) => {
      const angle = -Math.PI / 2 + (2 * Math.PI * i) / n;
      return [cx + r * Math.cos(angle), cy + r * Math.sin(angle)];
    };
    const root = svg("svg", { viewBox: "0 0 480 330", role: "img", "aria-labelledby": "chart-title chart-desc", id: "rubric-chart" });
    const title = svg("title", { id: "chart-title" });
    title.textContent = t("chartTitle");
    const desc = svg("desc", { id: "chart-desc" });
    desc.textContent = t("chartDesc", scores.map((s) => `${axisName(s.axis)} ${s.score}`).join(lang === "ja" ? "、" : ", "));
    root.append(title, desc);
    for (let level = 1; level <= 5; level++) {
      const ring = scores.map((_, i) => corner(i, (radius * level) / 5).join(",")).join(" ");
      root.append(svg("polygon", { class: "grid", points: ring }));
    }
    scores.forEach((s, i) => {
      const [x, y] = corner(i, radius);
      root.append(svg("line", { class: "axis", x1: cx, y1: cy, x2: x, y2: y, "data-axis": s.axis }));
      const [lx, ly] = corner(i, radius + 22);
      const label = svg("text", { x: lx, y: ly, "text-anchor": lx < cx - 5 ? "end" : lx > cx + 5 ? "start" : "middle", "dominant-baseline": "middle" });
      const name = axisName(s.axis);
      const limit = lang === "en" ? 16 : 9;  // English names are longer in characters, not in width
      const short = name.length > limit ? name.slice(0, limit - 1) + "…" : name;
      label.textContent = `${short} ${s.score}`;
      root.append(label);
    });
    const shape = scores.map((s, i) => corner(i, (radius * Math.max(0, Math.min(5, s.score))) / 5).join(",")).join(" ");
    root.append(svg("polygon", { class: "score", points: shape }));
    chart.append(root);
    for (const s of scores) {
      body.append(el("tr", {}, el("th", { scope: "row", text: axisName(s.axis) }), el("td", { text: `${s.score} / 5` }),
        el("td", { class: "reason", lang: langOf(s.reason), text: s.reason })));
    }
    const summary = run.rubric.summary ? [el("span", { lang: langOf(run.rubric.summary), text: run.rubric.summary })] : [];
    $("eval-summary").replaceChildren(...summary, ...(run.rubricCached ? [` ${t("cached")}`] : []));
  }

  function renderUsage() {
    const list = $("usage");
    list.replaceChildren();
    if (!run.usage) return;
    const rows = [
      [t("inputTokens"), run.usage.input_tokens], [t("outputTokens"), run.usage.output_tokens],
      [t("requests"), run.usage.requests],
    ];
    if (run.cost !== undefined) rows.push([t("cost"), run.cost === null ? t("costUnknown") : `$${run.cost.toFixed(4)}`]);
    for (const [name, value] of rows) list.append(el("dt", { text: name }), el("dd", { text: String(value) }));
  }

  function renderAgents() {
    const list = $("agents");
    list.replaceChildren();
    for (const name of AGENTS) {
      const state = run.agents.get(name) || "waiting";
      list.append(el("li", { "data-agent": name, "data-state": state, text: `${name}: ${t(state)}` }));
    }
  }

  function renderAll() {
    renderAgents();
    const marks = run.issues.map((issue, index) => ({
      start: issue.start, end: issue.end, cls: "issue", title: issueText(issue), index,
    }));
    renderText($("essay-view"), run.original, marks, accepted());
    renderStyle();
    renderDraft();
    renderGuard();
    renderRefs();
    renderRubric();
    renderUsage();
    $("demo").hidden = !run.demo && $("demo").dataset.known !== "demo";
    $("download").disabled = !run.finished || run.status !== "completed";
  }

  // ---------------------------------------------------------------- chunks
  function onChunk(chunk) {
    const data = chunk.data || {};
    switch (chunk.type) {
      case "route":
        for (const name of data.agents || []) run.agents.set(name, "waiting");
        break;
      case "findings": onFindings(data.agent, data.data || {}); break;
      case "patch":
        run.merged = data.patch;
        run.dropped = data.dropped || 0;
        break;
      case "rubric":
        run.rubric = data.rubric;
        run.rubricCached = Boolean(data.cached);
        run.agents.set("EvalAgent", "done");
        break;
      case "usage":
        if (chunk.agent === "smartao" || data.depth === undefined) run.usage = data;
        break;
      case "final":
        if (data.depth === undefined && data.output && typeof data.output === "object") {
          run.demo = Boolean(data.output.demo);
        } else if (data.depth !== undefined && AGENTS.includes(chunk.agent)) {
          run.agents.set(chunk.agent, "done");
          announce("agentDone", chunk.agent);
        }
        break;
      case "guardrail":
        if (data.action === "warn") announce("guardrail", data.message || data.reason || "");
        break;
      case "error":
        // in the page's language; the server's own message (English) stays at hand as the tooltip
        showAlert("runError", [data.code], [data.code, data.message].filter(Boolean).join(": "));
        break;
      case "done":
        run.finished = true;
        run.status = data.status;
        run.cost = data.cost_usd === undefined ? null : data.cost_usd;
        for (const [name, state] of run.agents) if (state === "running") run.agents.set(name, "done");
        // the run is over: an agent that never started (a block stopped the run first) did not run
        for (const name of AGENTS) if ((run.agents.get(name) || "waiting") === "waiting") run.agents.set(name, "skipped");
        document.body.dataset.status = data.status;
        announce(data.status === "completed" ? "completed" : data.status === "cancelled" ? "cancelled" : "failed");
        $("run").disabled = false;
        break;
      default:
        if (AGENTS.includes(chunk.agent) && run.agents.get(chunk.agent) !== "done" && run.agents.get(chunk.agent) !== "running") {
          run.agents.set(chunk.agent, "running");
          announce("agentStart", chunk.agent);
        }
    }
    renderAll();
  }

  function onFindings(agent, data) {
    run.agents.set(agent, "done");
    if (agent === "StyleAgent") {
      run.issues = (data.issues || []).slice().sort((a, b) => a.start - b.start || a.end - b.end);
      run.engine = run.issues.length ? run.issues[0].source : "";
      run.styleChanges = data.patch ? data.patch.change_map : [];
      run.styleKeys = new Set(run.styleChanges.map(changeKey));
    } else if (agent === "GuardAgent") {
      run.plagiarism = data.plagiarism;
    } else if (agent === "RefAgent") {
      run.references = data.references || [];
    } else if (agent === "DraftAgent") {
      run.draft = data.draft;
      run.draftChanges = data.patch ? data.patch.change_map : [];
    }
  }

  // ---------------------------------------------------------------- the SSE stream
  /** Read SSE blocks from a fetch response until it ends; chunks at or below lastSeq are skipped. */
  async function consume(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
        if (!data.length) continue; // a keep-alive comment
        const chunk = JSON.parse(data.join("\n"));
        if (chunk.seq && chunk.seq <= run.lastSeq) continue; // already seen before a reconnect
        if (chunk.seq) run.lastSeq = chunk.seq;
        onChunk(chunk);
        if (run.finished) return;
      }
    }
  }

  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Follow the run to its done chunk, resuming from lastSeq whenever the connection drops. */
  async function follow(response) {
    let attempt = 0;
    for (;;) {
      if (response) {
        try { await consume(response); } catch (error) { /* dropped mid-stream: resume below */ }
      }
      if (run.finished) return;
      attempt += 1;
      if (attempt > 8) { showAlert("gaveUp"); $("run").disabled = false; return; }
      announce("reconnecting", attempt);
      await pause(Math.min(150 * 2 ** attempt, 3000));
      try {
        response = await fetch(`/v1/runs/${run.id}/events`, { headers: { ...auth(), "Last-Event-ID": String(run.lastSeq) } });
        if (response.status === 401 || response.status === 403) { askKey("badKey"); return; }
        if (!response.ok) response = null;
      } catch (error) {
        response = null;
      }
    }
  }

  async function start(event) {
    event.preventDefault();
    hideAlert();
    const essay = $("essay").value;
    if (!essay.trim()) { showAlert("emptyEssay"); $("essay").focus(); return; }
    if (!keys.get()) { askKey("needKey"); return; }
    const request = {
      essay, kind: $("kind").value, university: $("university").value, faculty: $("faculty").value,
      policy: $("policy").value,
    };
    run = freshRun(request);
    run.styleKeys = new Set();
    $("results").hidden = false;
    $("run").disabled = true;
    document.body.dataset.status = "running";
    announce("starting");
    renderAll();
    let response;
    try {
      response = await fetch("/v1/runs", {
        method: "POST",
        headers: { ...auth(), "Content-Type": "application/json" },
        body: JSON.stringify({ agent: "smartao", input: JSON.stringify(request) }),
      });
    } catch (error) {
      showAlert("failed");
      $("run").disabled = false;
      return;
    }
    if (response.status === 401 || response.status === 403) { askKey("badKey"); $("run").disabled = false; return; }
    if (!response.ok) {
      const detail = await response.json().catch(() => ({}));
      showAlert("startFailed", [response.status], typeof detail.detail === "string" ? detail.detail : "");
      $("run").disabled = false;
      return;
    }
    run.id = response.headers.get("X-Run-Id");
    $("timeline").href = `/runs/${run.id}`;
    $("timeline").hidden = false;
    await follow(response);
  }
  $("form").addEventListener("submit", start);

  // ---------------------------------------------------------------- PatchJSON download
  $("download").addEventListener("click", () => {
    const changes = accepted().map((c) => ({ op: c.op, start: c.start, end: c.end, text: c.text == null ? null : c.text }));
    const patch = { new_text: applyChanges(run.original, changes), change_map: changes };
    const blob = new Blob([JSON.stringify(patch, null, 2)], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: "smartao-patch.json" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  });

  // ---------------------------------------------------------------- samples, demo label
  async function loadSamples() {
    const response = await fetch("/smartao/samples.json");
    if (!response.ok) return;
    const samples = await response.json();
    axesEn = new Map((samples.axes || []).map((axis) => [axis.name, axis.name_en]));
    for (const essay of samples.essays) {
      const option = el("option", { value: essay.id, "data-ja": essay.title_ja, "data-en": essay.title_en,
                                    text: lang === "en" ? essay.title_en : essay.title_ja });
      $("sample").append(option);
    }
    samples.schools.forEach((school, index) => {
      const ja = `${school.university} ${school.faculty}`;
      const en = school.label_en || ja;
      $("school").append(el("option", { value: String(index), "data-ja": ja, "data-en": en, text: lang === "en" ? en : ja }));
    });
    if (run) renderAll();
    $("sample").addEventListener("change", () => {
      const essay = samples.essays.find((e) => e.id === $("sample").value);
      if (essay) { $("essay").value = essay.text; $("kind").value = essay.kind; }
    });
    $("school").addEventListener("change", () => {
      const school = samples.schools[Number($("school").value)];
      if (school && $("school").value !== "") {
        $("university").value = school.university;
        $("faculty").value = school.faculty;
        $("policy").value = school.policy;
      }
    });
    if (samples.schools.length) {
      $("school").value = "0";
      $("school").dispatchEvent(new Event("change"));
    }
  }

  /** The demo label: the service lists the smartao agent's model as "smartao-demo" without a key. */
  async function checkDemo() {
    if (!keys.get()) return;
    try {
      const response = await fetch("/v1/agents", { headers: auth() });
      if (response.status === 401 || response.status === 403) { askKey("badKey"); return; }
      const body = await response.json();
      const smartao = (body.agents || []).find((a) => a.name === "smartao");
      if (smartao && smartao.model === "smartao-demo") {
        $("demo").dataset.known = "demo";
        $("demo").hidden = false;
      }
    } catch (error) { /* the label then comes with the run's report */ }
  }

  applyWords();
  loadSamples();
  $("run").disabled = true; // until the key is settled: nothing is sent with a key before
  keys.settle((current, other) => t("switchText", current, other)).then(() => {
    $("run").disabled = false;
    if (keys.get()) { keys.showTenant(); checkDemo(); } else askKey("needKey");
  });
})();
