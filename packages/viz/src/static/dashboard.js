// Dashboard behaviour: fills the charts, follows the run live by server-sent events (polling
// /api/runs/:id/status every 2 s while the stream is down, re-trying the stream every 10 s), filters turns.
(() => {
  const POLL_MS = 2000;
  const RETRY_STREAM_MS = 10_000;

  function globToRegExp(glob) {
    const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
    return new RegExp(`^${escaped}$`);
  }

  function pick(all, patterns) {
    const names = [];
    for (const pattern of patterns) {
      const re = globToRegExp(pattern);
      for (const name of Object.keys(all).sort())
        if (re.test(name) && !names.includes(name)) names.push(name);
    }
    return names.map((name) => ({ name, points: all[name] }));
  }

  function drawAll(charts) {
    let drawn = 0;
    for (const figure of document.querySelectorAll("figure.chart[data-series]")) {
      if (figure.dataset.kind === "heatmap") window.AirCharts.heatmap(figure, charts.heatmap);
      else window.AirCharts.line(figure, pick(charts.series, JSON.parse(figure.dataset.series)));
      drawn++;
    }
    document.body.dataset.chartsDrawn = String(drawn);
    document.body.dataset.seriesLoads = String(Number(document.body.dataset.seriesLoads || 0) + 1);
  }

  function drawInline() {
    const figures = document.querySelectorAll("figure.chart[data-points]");
    for (const figure of figures) {
      const data = JSON.parse(figure.dataset.points);
      window.AirCharts.line(
        figure,
        Object.entries(data).map(([name, points]) => ({ name, points })),
      );
    }
    if (figures.length) document.body.dataset.inlineChartsDrawn = "1";
  }

  async function refreshSeries(runId) {
    if (!document.querySelector("figure.chart[data-series]")) return;
    const res = await fetch(`/api/runs/${runId}/series`);
    if (res.ok) drawAll(await res.json());
  }

  async function refreshFragments() {
    for (const el of document.querySelectorAll("[data-fragment]")) {
      const res = await fetch(el.dataset.fragment);
      if (res.ok) el.innerHTML = await res.text();
    }
    document.dispatchEvent(new Event("air:fragments"));
  }

  /**
   * The run's state in words, as the store says it now: "running" (heartbeat fresh), "dead" (the run never
   * recorded its end and its heartbeat stopped), or how it ended. "live" only for a running run on the stream:
   * a finished run's page still follows the store (a resume), but nothing about it is live.
   */
  function headerText(status, mode) {
    const counts = `last step ${status.lastStep ?? "–"} · ${status.trajectories} rollouts`;
    const polling = mode === "polling" ? " · polling every 2 s (live stream down)" : "";
    if (status.state === "running") {
      const how =
        mode === "stream" ? "live" : mode === "polling" ? "polling every 2 s (live stream down)" : mode;
      return `running · ${counts} · ${how}`;
    }
    if (status.state === "dead") {
      const beat = status.heartbeatAt ? new Date(status.heartbeatAt).toISOString().slice(11, 19) : null;
      const since = beat ? `no heartbeat since ${beat} UTC` : "no heartbeat";
      return `dead: ${since}, and the run never recorded its end (its launcher was killed?) · ${counts}${polling}`;
    }
    return `${status.state} · ${counts}${polling}`;
  }

  function startLive() {
    const live = document.getElementById("live");
    if (!live) return;
    const runId = live.dataset.run;
    const text = document.getElementById("live-text");
    let version = null;
    let mode = "connecting";
    let pollTimer = 0;
    let source = null;
    let busy = Promise.resolve();

    const show = (status) => {
      live.dataset.status = status.state;
      text.textContent = headerText(status, mode);
    };
    const onStatus = (status) => {
      const changed = version !== null && status.version !== version;
      version = status.version;
      show(status);
      if (changed)
        busy = busy.then(async () => {
          await refreshSeries(runId);
          await refreshFragments();
          document.body.dataset.liveUpdates = String(Number(document.body.dataset.liveUpdates || 0) + 1);
        });
    };
    const setMode = (m) => {
      mode = m;
      document.body.dataset.liveMode = m;
    };

    const poll = async () => {
      try {
        const res = await fetch(`/api/runs/${runId}/status`);
        if (res.ok) onStatus(await res.json());
      } catch {
        text.textContent = "dashboard server unreachable";
      }
      if (mode === "polling") pollTimer = setTimeout(poll, POLL_MS);
    };
    let retryTimer = 0;
    const fallBack = () => {
      if (mode !== "polling") {
        setMode("polling");
        poll();
      }
      clearTimeout(retryTimer);
      retryTimer = setTimeout(openStream, RETRY_STREAM_MS);
    };
    function openStream() {
      if (!window.EventSource) return fallBack();
      if (source) source.close();
      const es = new EventSource(`/api/runs/${runId}/events`);
      source = es;
      es.addEventListener("open", () => {
        clearTimeout(pollTimer);
        setMode("stream");
      });
      es.addEventListener("status", (e) => onStatus(JSON.parse(e.data)));
      es.addEventListener("error", () => {
        // The browser retries a dropped stream by itself; once it gives up (CLOSED), or while the stream
        // cannot reconnect, poll instead and try the stream again later.
        es.close();
        if (source === es) source = null;
        fallBack();
      });
    }
    refreshSeries(runId);
    openStream();
  }

  function turnFilter() {
    const input = document.getElementById("turn-filter");
    const scored = document.getElementById("only-scored");
    const flagged = document.getElementById("only-flagged");
    if (!input || !scored) return;
    const apply = () => {
      const q = input.value.toLowerCase();
      for (const turn of document.querySelectorAll(".turn")) {
        const match =
          (!q || turn.textContent.toLowerCase().includes(q)) &&
          (!scored.checked || turn.classList.contains("scored")) &&
          (!flagged?.checked || turn.classList.contains("tampered"));
        turn.hidden = !match;
      }
    };
    input.addEventListener("input", apply);
    scored.addEventListener("change", apply);
    flagged?.addEventListener("change", apply);
    document.addEventListener("air:fragments", apply);
  }

  function compareForm() {
    const form = document.querySelector(".compare-form");
    if (!form) return;
    form.addEventListener("submit", (event) => {
      if (!form.querySelector("input[name=a]:checked") || !form.querySelector("input[name=b]:checked")) {
        event.preventDefault();
        alert("Pick trajectory A and trajectory B first.");
      }
    });
  }

  drawInline();
  startLive();
  turnFilter();
  compareForm();
})();
