/* ofc's operator page: reads who it is shown to (GET /ui/whoami) and the
 * state (GET /v1/state?with_fabric=true&fabric_brief=true: the fabric
 * without its wiring, circuits and logical topology, which it does not
 * draw), and keeps it current through the API's Watch (GET /v1/watch, one
 * JSON Response a line, read as a stream): each event carries what it
 * changed of the state (event.delta), applied
 * to the page's copy (docs/control.md, "Keeping a copy of the state"). The
 * whole state is read again only at the start, when the stream opens
 * anew, at a gap in the events' numbers, on another log, or when a delta
 * says read_again (a new leader's first event), at most one read in
 * flight, each with If-None-Match (a 304 costs no body); nothing is asked
 * while nothing happens, but while a replicated fabric's device shows no
 * last contact (after a failover: a delta never carries it), a read every
 * 5 s, a minute at most. What a delta does not
 * carry (the devices' counters, the replicas' leases) is as of the last
 * read. Replicated ofcd says who leads on the Watch too
 * (KIND_LEADER_CHANGED, from every replica), so the replicas need no
 * polling either. The stream is the one connection a page left
 * open holds; when it ends the page says so and opens it again, waiting
 * longer each time (1 s to 30 s).
 *
 * What a role sees is what ofcd answers it (a tenant: its own partitions
 * and circuits); the buttons (restore a failure, release a partition) are
 * drawn only for a role that may ask (an admin; a tenant for its own
 * partitions), and ofcd checks them again. Text goes in through
 * textContent only: nothing the state holds is read as HTML. */
"use strict";

(function () {
	const $ = (id) => document.getElementById(id);
	const PALETTE = ["#4f9dde", "#e0a84a", "#9b7be0", "#4cc3a0", "#e07a9b", "#c6d35a", "#5ad3d6", "#e0804a"];
	const MAX_EVENTS = 50;

	let me = null; /* whoami */
	let state = null;
	const events = [];
	const pos = {seq: 0, log: ""}; /* the last event of the fabric's log seen */
	/* The transactions seen on the Watch, by ticket: who asked and for
	 * what (the queued event), what it changed (started), how it ended and
	 * how long it took (committed or rolled back). The state carries only
	 * the running one and the queue. */
	const txns = new Map();
	const MAX_TXNS = 10;
	const colors = new Map();
	let inflight = false, again = false;
	/* when the copy was last read (this browser's clock) */
	let readAt = 0;
	/* The running config (hosts, switches) is read with the state once, and
	 * again only when a config is applied or the stream opens anew: the
	 * other events change the state, not the config, and the config is
	 * most of the state's bytes. */
	let fabric = null, needFabric = true;
	/* the page's stream: when it was lost (0: live) */
	const live = {lost: 0};
	/* Where the copy (state) stands in the event log, and the last deltas
	 * seen, to apply again on a read answered before them. */
	const at = {seq: 0, log: ""};
	const recent = [];
	const MAX_RECENT = 256;

	/* A partition's colour from its name alone (FNV-1a over its UTF-16
	 * units): the same on every page, every replica's and every reload,
	 * whatever order the partitions arrive in. Two names may share one. */
	function color(p) {
		if (!p) return "#6b7a88";
		if (!colors.has(p)) {
			let h = 0x811c9dc5;
			for (let i = 0; i < p.length; i++) h = Math.imul(h ^ p.charCodeAt(i), 0x01000193) >>> 0;
			colors.set(p, PALETTE[h % PALETTE.length]);
		}
		return colors.get(p);
	}

	function node(tag, text, cls) {
		const e = document.createElement(tag);
		if (text !== undefined && text !== null) e.textContent = String(text);
		if (cls) e.className = cls;
		return e;
	}

	/* A table of rows (arrays of strings or nodes). */
	function table(head, rows, empty) {
		if (!rows.length) return node("p", empty, "dim");
		const t = node("table");
		const hr = node("tr");
		for (const h of head) hr.appendChild(node("th", h));
		t.appendChild(hr);
		for (const r of rows) {
			const tr = node("tr");
			for (const c of r) {
				const td = node("td");
				if (c instanceof Node) td.appendChild(c);
				else td.textContent = c === undefined || c === null ? "" : String(c);
				tr.appendChild(td);
			}
			t.appendChild(tr);
		}
		return t;
	}

	function when(ms) {
		if (!ms) return "";
		const d = new Date(Number(ms));
		return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
	}

	function hostsText(hosts) {
		if (!hosts || !hosts.length) return "";
		return hosts.length <= 6 ? hosts.join(" ") : hosts.slice(0, 4).join(" ") + " … " + hosts[hosts.length - 1] + " (" + hosts.length + ")";
	}

	function showError(msg) {
		const f = $("error");
		f.hidden = !msg;
		f.textContent = msg || "";
	}

	/* The last state read of each URL and its ETag: a read again asks with
	 * If-None-Match, and a 304 costs no body (a reload too: kept in the
	 * tab's sessionStorage while it fits, else in memory alone). */
	const kept = new Map();

	function keptOf(url) {
		if (kept.has(url)) return kept.get(url);
		try {
			const v = sessionStorage.getItem("ofc:" + url);
			if (v) return JSON.parse(v);
		} catch (e) {
			/* (no storage: asked whole) */
		}
		return null;
	}

	function keep(url, etag, text) {
		kept.set(url, {etag, text});
		try {
			sessionStorage.setItem("ofc:" + url, JSON.stringify({etag, text}));
		} catch (e) {
			/* (over the tab's quota: kept in memory alone) */
		}
	}

	async function readState(url) {
		const k = keptOf(url);
		const r = await fetch(url, {cache: "no-store", headers: k ? {"If-None-Match": k.etag} : {}});
		if (r.status === 304 && k) return {ok: true, status: 200, j: JSON.parse(k.text)};
		const text = await r.text();
		let j;
		try {
			j = JSON.parse(text);
		} catch (e) {
			j = {message: "HTTP " + r.status};
		}
		const etag = r.headers.get("ETag");
		if (r.ok && etag) keep(url, etag, text);
		return {ok: r.ok, status: r.status, j};
	}

	async function api(path, body) {
		const opt = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
		const r = await fetch(path, opt);
		const j = await r.json().catch(() => ({message: "HTTP " + r.status}));
		return {ok: r.ok, status: r.status, j};
	}

	/* what an action does, asked before it is sent */
	const CONFIRM = {
		release: (arg) => "Release partition " + arg + "? Its hosts return to the pool (its circuits stay until the next job there).",
		restore: (arg) => arg + " is in service again? The schedule is re-planned with it.",
	};

	function button(label, action, arg, fn) {
		const b = node("button", label);
		b.setAttribute("data-action", action);
		b.setAttribute("data-arg", arg);
		b.addEventListener("click", async () => {
			if (CONFIRM[action] && !window.confirm(CONFIRM[action](arg))) return;
			b.disabled = true;
			const r = await fn();
			if (!r.ok) showError(label + " " + arg + ": " + (r.j.message || "HTTP " + r.status));
			b.disabled = false;
		});
		return b;
	}

	/* ---- the model of the picture ---- */

	function failures(s) {
		const f = {hosts: new Set(), ports: new Map(), links: []};
		for (const it of s.failed || []) {
			if (it.includes(":")) {
				const [h, p] = it.split(":");
				if (!f.ports.has(h)) f.ports.set(h, []);
				f.ports.get(h).push(p);
			} else if (/^[^-]+-[^-]+$/.test(it) && !(s.fabric && (s.fabric.hosts || []).some((h) => h.name === it))) {
				f.links.push(it.split("-"));
			} else f.hosts.add(it);
		}
		return f;
	}

	function model(s) {
		const partitions = new Map(), hostPart = new Map();
		for (const p of s.held || []) {
			partitions.set(p.name, {hosts: p.hosts || [], circuits: 0});
			for (const h of p.hosts || []) hostPart.set(h, p.name);
		}
		let hosts = s.fabric && s.fabric.hosts ? s.fabric.hosts.map((h) => h.name) : null;
		const seen = new Set();
		const circuits = [], switches = [];
		const ports = new Map(); /* host -> [[port, text]] */
		const swPorts = new Map();
		for (const sw of (s.fabric && s.fabric.switches) || []) swPorts.set(sw.name, sw.ports);
		for (const d of s.devices || []) {
			if (d.kind !== "switch" && !(d.circuits || []).length) continue;
			/* a port is in use when a circuit enters or leaves by it (a
			 * port has both sides: one circuit in, another out) */
			const owner = new Map();
			for (const c of d.circuits || []) {
				const pa = hostPart.get(c.src_host), pb = hostPart.get(c.dst_host);
				const p = pa && pa === pb ? pa : "";
				circuits.push({a: c.src_host, b: c.dst_host, partition: p});
				/* each host's ports, for its hover: where each leads */
				const via = " (" + d.name + " " + (c.in_port || "?") + "→" + (c.out_port || "?") + (p ? ", " + p : "") + ")";
				portLine(ports, c.src_host, c.src_port, "port " + (c.src_port || 0) + " → " + c.dst_host + ":" + (c.dst_port || 0) + via);
				portLine(ports, c.dst_host, c.dst_port, "port " + (c.dst_port || 0) + " ← " + c.src_host + ":" + (c.src_port || 0) + via);
				if (c.src_host) seen.add(c.src_host);
				if (c.dst_host) seen.add(c.dst_host);
				for (const port of [c.in_port, c.out_port]) if (port && !owner.has(port)) owner.set(port, p);
				if (p) partitions.get(p).circuits++;
			}
			const by = new Map();
			for (const p of owner.values()) by.set(p, (by.get(p) || 0) + 1);
			switches.push({name: d.name, ports: swPorts.get(d.name), used: owner.size, byPartition: by, alarms: d.port_alarms || []});
		}
		if (!hosts) {
			for (const p of partitions.values()) p.hosts.forEach((h) => seen.add(h));
			hosts = [...seen].sort((a, b) => a.localeCompare(b, undefined, {numeric: true}));
		}
		const moved = new Set((s.moved || []).map((m) => m.split(":")[0]));
		const spec = (s.topology && s.topology.spec) || s.target_topology || "";
		for (const l of ports.values()) l.sort((x, y) => x[0] - y[0]);
		return {hosts, spec, circuits, switches, partitions, failed: failures(s), moved, color, ports, hostPart};
	}

	function portLine(ports, host, port, text) {
		if (!host) return;
		if (!ports.has(host)) ports.set(host, []);
		ports.get(host).push([Number(port || 0), text]);
	}

	/* ---- the sections ---- */

	function renderHeader(s) {
		$("fabric-name").textContent = s.fabric_name || "ofc";
		document.title = "ofc: " + (s.fabric_name || "");
		const bits = [];
		if (s.config_generation) bits.push("generation " + s.config_generation);
		if (s.at_target !== undefined) bits.push(s.at_target ? "at target" : "not at target" + (s.at_target_detail ? ": " + s.at_target_detail : ""));
		if (s.partition) bits.push("last commit: partition " + s.partition);
		$("summary").textContent = bits.join(" · ");
	}

	/* What the picture was last drawn from: most events change nothing in
	 * it (a transaction queued, a refusal), and a redraw repaints it all. */
	let drawn = "";

	function renderFabric(s) {
		const m = model(s);
		$("fabric-topology").textContent = (m.spec || "") + " · " + m.hosts.length + " hosts · " + m.circuits.length + " circuits";
		const key = JSON.stringify([m.spec, m.hosts, m.circuits, [...m.failed.hosts], [...m.failed.ports], m.failed.links, [...m.moved],
			[...m.ports], [...m.hostPart], m.switches.map((w) => [w.name, w.ports, w.used, [...w.byPartition], w.alarms])]);
		if (key === drawn) return;
		drawn = key;
		window.ofcFabric.draw($("fabric"), m);
		window.ofcFabric.drawSwitches($("switches"), m.switches, color);
		const lg = [];
		for (const p of ["", ...m.partitions.keys()]) {
			const sw = node("span", null, "swatch");
			sw.style.background = color(p);
			lg.push(sw, node("span", p || "fabric"));
		}
		$("legend").replaceChildren(...lg);
	}

	function renderReplicas(s) {
		const c = s.cluster;
		$("replicas-section").hidden = !c;
		if (!c) return;
		const L = c.leader;
		const head = node("p");
		/* A replica the page no longer hears (its stream lost) is named as
		 * last heard, and said to be silent: not "(leader)" as if it led.
		 * A follower's lease only keeps its registration (renewed every
		 * half lease, so it reads low): the leader's alone fences devices. */
		const gone = live.lost ? " · NOT ANSWERING since " + when(live.lost) + " (last heard as " + c.role + ")" : "";
		head.textContent = "leader: " + (L ? L.name + " (epoch " + L.epoch + ")" : "none (an election is under way)") +
			" · this replica: " + c.name + (gone || " (" + c.role + ")") +
			(c.role === "leader" && !gone && c.lease_left_seconds !== undefined ? " · lease " + c.lease_left_seconds.toFixed(1) + " of " + c.lease_ttl_seconds + " s" : "") +
			(c.stale ? " · STALE" : "");
		head.setAttribute("data-leader", L ? L.name : "");
		head.setAttribute("data-this-replica", c.name + (gone ? " silent" : " " + c.role));
		/* each replica as etcd holds its registration: its last contact is
		 * when it last wrote it (every half lease), as of this read */
		const reps = (c.replicas || []).map((r) => {
			const nm = node("span", r.name);
			nm.setAttribute("data-replica", r.name);
			nm.setAttribute("data-last-contact", String(r.last_contact_unix_ms || 0));
			const lease = r.lease_left_seconds === undefined ? "" : r.role === "leader" ? r.lease_left_seconds.toFixed(1) + " s"
				: node("span", "registered", "dim");
			if (lease instanceof Node) lease.title = "a follower's lease keeps its registration alive (renewed every half lease); only the leader's fences the devices";
			return [nm, r.role, r.host, r.pid, r.role === "leader" ? r.epoch : "", lease, when(r.last_contact_unix_ms)];
		});
		const rows = (c.members || []).map((mb) => [mb.name, mb.url, node("span", mb.reachable ? "reachable" : "unreachable", mb.reachable ? "ok" : "bad"), mb.leader ? "etcd leader" : ""]);
		$("replicas").replaceChildren(head, table(["replica", "role", "host", "pid", "epoch", "leader's lease left", "last contact"], reps, "no replica registered"),
			table(["etcd member", "url", "health", ""], rows, "no etcd members known"));
	}

	function mayRelease(name) {
		if (!me) return false;
		if (me.role === "admin") return true;
		return me.role === "tenant" && me.partitions.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : p === name));
	}

	/* "3 s", "4 min", "2 h" since ms (unix), or "". */
	function age(ms) {
		if (!ms) return "";
		const s = Math.max(0, (Date.now() - Number(ms)) / 1000);
		return s < 120 ? Math.round(s) + " s" : s < 7200 ? Math.round(s / 60) + " min" : Math.round(s / 3600) + " h";
	}

	/* When an event whose text names `what` (of kind re) was last seen. */
	function seenAt(re, what) {
		for (const e of events) if (re.test(e.kind) && e.text.includes(what)) return e.time_unix_ms;
		return 0;
	}

	const SEVERITY = ["critical", "major", "minor", "warning"];
	const DAY_MS = 86400000;

	/* What needs an operator, from the state alone (and the events' times
	 * where the state has none): devices unreachable, replicas missing or
	 * silent, failures in effect, port alarms, a schedule missing, the
	 * fabric off its target, the gateway's CRL within a day of its
	 * nextUpdate or past it; worst first, oldest first. */
	function renderAlarms(s) {
		const a = [];
		const add = (sev, what, since) => a.push({sev, what, since});
		for (const d of s.devices || []) {
			if (d.reachable === false) add("critical", "device " + d.name + " unreachable" + (d.error ? ": " + d.error : ""), d.last_contact_unix_ms);
			for (const p of d.port_alarms || [])
				add(p.kind === "failed" ? "major" : "minor", d.name + " port " + p.port + " " + p.kind + (p.host_port ? " (" + p.host_port + ")" : "") +
					(p.power_dbm !== undefined ? " " + p.power_dbm + " dBm" : ""), 0);
		}
		const c = s.cluster;
		if (c) {
			const up = new Set((c.replicas || []).map((r) => r.name));
			for (const k of c.known_replicas || []) if (!up.has(k)) add("critical", "replica " + k + " is not running (registered once, its registration gone)", seenAt(/LEADER_CHANGED|REPLICA/, k));
			if (!c.leader) add("critical", "no replica leads (an election is under way)", 0);
			if (c.stale) add("major", "this replica's view is stale: " + (c.stale_reason || "etcd does not answer"), 0);
			for (const mb of c.members || []) if (!mb.reachable) add("major", "etcd member " + mb.name + " unreachable", 0);
		}
		if (live.lost) add("major", "this page hears nothing from " + (c ? "replica " + c.name : "ofcd") + " (its stream is lost; retrying)", live.lost);
		for (const it of s.failed || []) add("major", "failed: " + it, seenAt(/FAILURE_REPORTED/, it));
		for (const l of (wiring && wiring.links) || []) if (l.verdict === "miswired") add("major", "miswired: " + (l.detail || l.dst + " hears " + l.heard), 0);
		if (s.schedule_error) add("major", "no schedule: " + s.schedule_error, 0);
		if (s.at_target === false) add("minor", "not at target" + (s.at_target_detail ? ": " + s.at_target_detail : ""), 0);
		/* the gateway's CRL: past its nextUpdate the gateway refuses every
		 * client certificate, this page's too (whoami says when) */
		const crl = me && me.crl_next_update ? Number(me.crl_next_update) * 1000 : 0;
		const reissue = "issue a fresh one (openssl ca -gencrl) and SIGHUP ofc-gateway";
		if (crl && Date.now() >= crl) add("major", "the gateway's CRL is past its nextUpdate (" + when(crl) + "): every client certificate is refused; " + reissue, crl);
		else if (crl && Date.now() >= crl - DAY_MS) add("warning", "the gateway's CRL reaches its nextUpdate at " + when(crl) + ", then every client certificate is refused: " + reissue, crl - DAY_MS);
		a.sort((x, y) => SEVERITY.indexOf(x.sev) - SEVERITY.indexOf(y.sev) || (x.since || Infinity) - (y.since || Infinity));
		const rows = a.map((x) => {
			const sv = node("span", x.sev, x.sev === "critical" || x.sev === "major" ? "bad" : "warn");
			sv.setAttribute("data-severity", x.sev);
			return [sv, x.what, node("span", age(x.since), "nowrap")];
		});
		$("alarms").replaceChildren(table(["severity", "what", "for"], rows, "none"));
	}

	function renderPartitions(s) {
		const rows = (s.held || []).map((p) => {
			const sw = node("span", null, "swatch");
			sw.style.background = color(p.name);
			const nm = node("span");
			nm.append(sw, node("span", p.name));
			nm.setAttribute("data-partition", p.name);
			const act = mayRelease(p.name) ? button("release", "release", p.name, () => api("/v1/release-partition", {partition: p.name}).then(refreshAfter)) : "";
			/* a Slurm job's partition (its prolog names it slurm-job-ID) */
			const jm = /^slurm-job-(\d+)$/.exec(p.name);
			const job = node("span", jm ? jm[1] : "");
			if (jm) job.setAttribute("data-slurm-job", jm[1]);
			/* (the action first: a narrow screen scrolls the table's right side away) */
			return [act, nm, job, p.owner, p.topology, hostsText(p.hosts), when(p.since_unix_ms), p.at_target ? "yes" : "no"];
		});
		$("partitions").replaceChildren(table(["", "name", "Slurm job", "owner", "topology", "hosts", "since", "at target"], rows, "none held"));
	}

	/* a failure its host's agent made (it restores it when the port stays up) */
	function hostMade(it) {
		const e = node("span", "its host (link down)", "dim");
		e.setAttribute("data-by-host", it);
		return e;
	}

	function renderFailures(s) {
		const byHost = new Set(s.failed_by_host || []);
		const rows = (s.failed || []).map((it) => [it, byHost.has(it) ? hostMade(it) : "", me && me.role === "admin" ? button("restore", "restore", it, () => api("/v1/report-failure", {items: [it], restore: true}).then(refreshAfter)) : ""]);
		for (const mv of s.moved || []) rows.push(["moved " + mv, "", ""]);
		const parts = [table(["failed", "by", ""], rows, "none in effect")];
		if (s.schedule_error) parts.push(node("p", s.schedule_error, "bad"));
		$("failures").replaceChildren(...parts);
	}

	/* The wiring as the hosts' agents hear it (State.wiring, asked with
	 * GetState.with_wiring): no event says when a report changes a
	 * verdict, so it is read every WIRING_EVERY_MS while the page is in
	 * view, apart from the copy the Watch keeps, less often when the
	 * answer is large (the whole state comes with it: a few MB at 8,192
	 * hosts), so that these reads stay under WIRING_BYTES_PER_MS; never
	 * for a tenant, whose state ofcd answers without it. */
	const WIRING_EVERY_MS = 5000;
	const WIRING_BYTES_PER_MS = 20; /* 20 KB/s, before gzip */
	const WIRING_ROWS = 256;
	const VERDICT_ORDER = {miswired: 0, dark: 1, "not-seen": 2, confirmed: 3};
	let wiring = null, wiringRead = false;

	async function readWiring() {
		let next = WIRING_EVERY_MS;
		if (!me || me.role === "tenant") return;
		try {
			if (document.hidden) return;
			const r = await fetch("/v1/state?with_wiring=true", {cache: "no-store"});
			const text = await r.text();
			next = Math.max(WIRING_EVERY_MS, text.length / WIRING_BYTES_PER_MS);
			if (!r.ok) return;
			const j = JSON.parse(text);
			wiring = (j.state && j.state.wiring) || null;
			wiringRead = true;
			if (state) {
				renderWiring();
				renderAlarms(state);
			}
		} catch (e) {
			/* (the next tick tries again; the stream says when ofcd is lost) */
		} finally {
			setTimeout(readWiring, next);
		}
	}

	function renderWiring() {
		const sec = $("wiring-section");
		sec.hidden = !me || me.role === "tenant";
		if (sec.hidden) return;
		const w = wiring;
		/* a follower hears no agent (they report to the leader): it names
		 * the leader, whose page has the verdict, instead of "none reported" */
		if (w && w.follower) {
			const L = w.leader;
			const p = node("p", L ? "the hosts' agents report to the leader, " + L.name + ", which has the verdict (this replica follows and hears none)" : "the hosts' agents report to the leader, and none leads now (an election is under way)", "dim");
			p.setAttribute("data-wiring-leader", L ? L.name : "");
			if (L && L.url) {
				const a = node("a", "the leader's page");
				a.href = L.url.replace(/\/+$/, "") + "/ui/";
				p.append(": ", a);
			}
			$("wiring").replaceChildren(p);
			return;
		}
		if (!w || !w.hosts_reporting) {
			$("wiring").replaceChildren(node("p", !wiringRead ? "not read yet" : w ? "no host's agent has reported to this replica yet: every link not seen" : "this replica keeps no verdict (the leader's agents report to it)", "dim"));
			return;
		}
		const n = (k) => w[k] || 0;
		const age = w.oldest_report_age_seconds !== undefined ? "; the oldest report " + w.oldest_report_age_seconds.toFixed(1) + " s old" : "";
		const sum = node("p", n("confirmed") + " confirmed, " + n("miswired") + " miswired, " + n("dark") + " dark, " + n("not_seen") + " not seen; " + w.hosts_reporting + " hosts reporting" + age);
		sum.setAttribute("data-miswired", String(n("miswired")));
		const links = (w.links || []).slice().sort((a, b) => VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict] || (a.dst < b.dst ? -1 : a.dst > b.dst ? 1 : 0));
		const rows = links.slice(0, WIRING_ROWS).map((l) => {
			const v = node("span", l.verdict, l.verdict === "miswired" ? "bad" : l.verdict === "confirmed" ? "" : "dim");
			v.setAttribute("data-link", l.dst);
			v.setAttribute("data-verdict", l.verdict);
			return [l.src + " → " + l.dst, v, l.heard || "", l.detail || "", l.age_seconds !== undefined ? l.age_seconds.toFixed(1) + " s" : ""];
		});
		const parts = [sum, table(["circuit", "verdict", "heard instead", "", "report"], rows, "no circuits in the record")];
		if (links.length > WIRING_ROWS) parts.push(node("p", (links.length - WIRING_ROWS) + " more, confirmed or not seen (ofc wiring lists them all)", "dim"));
		$("wiring").replaceChildren(...parts);
	}

	function renderTransactions(s) {
		const rows = [];
		const t = s.transaction;
		if (t) rows.push(["now", t.kind, t.target, t.principal, t.state, t.operations, t.seconds !== undefined ? t.seconds.toFixed(3) + " s" : ""]);
		for (const q of s.queue || []) rows.push(["queued #" + q.ticket, q.kind, q.target, q.principal, q.state, "", ""]);
		const parts = [table(["", "kind", "target", "who", "state", "ops", "took"], rows, "nothing running or queued")];
		if (s.config_generation)
			parts.push(node("p", "last commit: generation " + s.config_generation + (s.committed_principal ? " by " + s.committed_principal : "") +
				(s.committed_by ? " on " + s.committed_by : "") + (s.committed_unix_ms ? " at " + when(s.committed_unix_ms) : ""), "dim"));
		const seen = [...txns.values()].sort((a, b) => b.ticket - a.ticket);
		if (seen.length)
			parts.push(table(["ticket", "who", "what", "changed", "outcome", "took"], seen.map((t) => {
				const row = [String(t.ticket), t.who || "", t.what || "", t.ops || "", t.outcome || "", t.took !== undefined ? (t.took / 1000).toFixed(3) + " s" : ""];
				return row;
			}), ""));
		$("transactions").replaceChildren(...parts);
	}

	function renderSchedule(s) {
		const c = s.schedule;
		/* a tenant is shown its partitions' schedules, not the fabric's */
		const own = (s.held || []).filter((p) => p.schedule);
		if (!c && s.tenant && own.length) {
			const rows = own.map((p) => [p.name, p.schedule.collective + " (" + p.schedule.algorithm + ") on " + p.schedule.topology + ", " +
				p.schedule.nodes + " nodes", String(p.schedule.num_steps), (p.schedule.time_us || 0).toFixed(1) + " µs", p.schedule.verified ? "yes" : "no"]);
			$("schedule").replaceChildren(table(["partition", "collective", "steps", "time", "verified"], rows, ""));
			return;
		}
		if (!c) {
			const why = s.schedule_computing_since_unix_ms ? "being computed since " + when(s.schedule_computing_since_unix_ms) : s.schedule_error || "none";
			$("schedule").replaceChildren(node("p", why, "dim"));
			return;
		}
		const rows = [
			["collective", c.collective + " (" + c.algorithm + ")"],
			["on", c.topology + ", " + c.nodes + " nodes"],
			["steps", c.num_steps + (c.lower_bound_steps ? " (bound " + c.lower_bound_steps + ")" : "")],
			["time", (c.time_us || 0).toFixed(1) + " µs" + (c.lower_bound_us ? " against a bound of " + c.lower_bound_us.toFixed(1) + " µs" : "")],
			["verified", c.verified ? "yes" : "no"],
		];
		$("schedule").replaceChildren(table(["", ""], rows, ""));
	}

	function renderDevices(s) {
		const rows = (s.devices || []).map((d) => {
			/* a follower talks to no device: it shows the leader's word
			 * (events) and the leader's last contact, named */
			const by = d.last_contact_by ? " (" + d.last_contact_by + ")" : "";
			const r = d.reachable !== undefined ? node("span", d.reachable ? "yes" : "no", d.reachable ? "ok" : "bad")
				: by ? node("span", "answered" + by, "ok") : node("span", "not yet", "dim");
			const al = (d.port_alarms || []).map((a) => "port " + a.port + " " + a.kind + (a.power_dbm !== undefined ? " " + a.power_dbm + " dBm" : "")).join(", ");
			/* what ofcd counted talking to it (absent: not talked to yet) */
			/* (a tenant is shown no device figures: not "never") */
			const last = node("span", d.last_contact_unix_ms ? when(d.last_contact_unix_ms) + by : s.tenant ? "not shown" : "never", d.last_contact_unix_ms ? "" : "dim");
			last.setAttribute("data-device", d.name);
			if (d.last_contact_by)
				last.setAttribute("data-contact-by", d.last_contact_by);
			last.setAttribute("data-last-contact", String(d.last_contact_unix_ms || 0));
			last.setAttribute("data-commands", String(d.commands || 0));
			const errs = Number(d.errors || 0);
			return [d.name, d.kind, d.driver, r, d.error || "", d.entries !== undefined ? d.entries : (d.circuits || []).length,
				d.at_target === undefined ? "" : d.at_target ? "yes" : "no", d.in_sync === undefined ? "" : d.in_sync ? "yes" : "no",
				last, d.commands === undefined ? "" : String(d.commands), d.errors === undefined ? "" : node("span", String(errs), errs ? "bad" : ""),
				al ? node("span", al, "bad") : ""];
		});
		$("devices").replaceChildren(table(["device", "kind", "driver", "reachable", "error", "entries", "at target", "in sync", "last contact", "commands", "errors", "alarms"], rows, "none"));
	}

	function renderEvents() {
		$("events").replaceChildren(table(["time", "kind", "what"], events.map((e) => [when(e.time_unix_ms), e.kind.replace(/^KIND_/, "").toLowerCase(), e.text]), "none yet"));
	}

	/* A replicated fabric's device with no last contact (a new leader has
	 * not talked to it yet, or a follower has not seen the leader's
	 * registration say it): a delta never carries it, so the copy is read
	 * again (conditionally) every CONTACT_MS until it shows one, at most
	 * CONTACT_TRIES times; nothing is asked once every device has one. */
	const CONTACT_MS = 5000, CONTACT_TRIES = 12;
	const contact = {timer: 0, tries: 0};

	function checkContacts() {
		const missing = state && state.cluster && !state.tenant && (state.devices || []).some((d) => !d.last_contact_unix_ms);
		if (!missing) {
			contact.tries = 0;
			return;
		}
		if (contact.timer || contact.tries >= CONTACT_TRIES) return;
		contact.tries++;
		contact.timer = setTimeout(() => {
			contact.timer = 0;
			refresh();
		}, CONTACT_MS);
	}

	function render() {
		if (!state) return;
		checkContacts();
		renderHeader(state);
		renderAlarms(state);
		renderFabric(state);
		renderReplicas(state);
		renderPartitions(state);
		renderFailures(state);
		renderWiring();
		renderTransactions(state);
		renderSchedule(state);
		renderDevices(state);
		renderEvents();
		document.body.setAttribute("data-generation", String(state.config_generation || 0));
	}

	/* ---- the state, and the Watch that keeps it current ---- */

	async function refresh() {
		if (inflight) {
			again = true;
			return;
		}
		inflight = true;
		try {
			do {
				again = false;
				const withFabric = needFabric;
				needFabric = false;
				const r = await readState(withFabric ? "/v1/state?with_fabric=true&fabric_brief=true" : "/v1/state");
				if (r.ok) {
					readAt = Date.now();
					state = r.j.state || {};
					at.seq = Number(state.event_seq || 0);
					at.log = String(state.event_log || "");
					catchUp();
					if (withFabric) fabric = state.fabric || null;
					else if (fabric && state.fabric_name === fabric.name) state.fabric = fabric;
					else if (fabric) needFabric = again = true; /* another fabric */
					showError("");
					render();
				} else {
					needFabric = needFabric || withFabric;
					showError("state: " + (r.j.message || "HTTP " + r.status));
				}
			} while (again);
		} catch (e) {
			needFabric = true;
			showError("state: " + e.message);
		} finally {
			inflight = false;
		}
	}

	/* After a button's request: its answer passed on; the Watch brings
	 * what it changed. */
	function refreshAfter(r) {
		return r;
	}

	/* A device of a delta with the counters the copy's had (a delta does
	 * not carry them: what ofcd counted, the leader's last contact). */
	function withCounters(e, old) {
		const merged = Object.assign({}, e);
		if (!old) return merged;
		for (const c of ["last_contact_unix_ms", "last_contact_by", "commands", "errors"])
			if (old[c] !== undefined && merged[c] === undefined) merged[c] = old[c];
		return merged;
	}

	/* A delta (event.delta) applied to the copy: each field of set replaces
	 * the copy's, but devices and held, whose entries replace the entry of
	 * their name (the list whole when *_whole); cleared removes fields. The
	 * JSON writes every list, so an empty one in set is one the delta does
	 * not carry (an emptied list is in cleared). */
	function applyDelta(s, d) {
		const set = d.set || {};
		for (const k of Object.keys(set)) {
			if (k === "devices" || k === "held" || (Array.isArray(set[k]) && !set[k].length)) continue;
			s[k] = set[k];
		}
		for (const [k, whole] of [["devices", d.devices_whole], ["held", d.held_whole]]) {
			const given = set[k] || [];
			if (whole) {
				/* (a device keeps the counters the delta does not carry: a
				 * follower's page showed its switch "never" contacted after
				 * a failover's whole list) */
				const before = new Map((s[k] || []).map((e) => [e.name, e]));
				if (given.length) s[k] = given.map((e) => (k === "devices" ? withCounters(e, before.get(e.name)) : e));
				else delete s[k];
				continue;
			}
			if (!given.length) continue;
			const list = s[k] || (s[k] = []);
			const where = new Map(list.map((e, i) => [e.name, i]));
			const patched = new Set((d.circuits || []).map((p) => p.device));
			for (const e of given) {
				/* (a device keeps its counters, which a delta does not carry,
				 * and its circuits when a patch changes them) */
				const old = where.has(e.name) ? list[where.get(e.name)] : null;
				const merged = k === "devices" ? withCounters(e, old) : Object.assign({}, e);
				if (k === "devices" && old && patched.has(e.name)) merged.circuits = old.circuits;
				if (old) list[where.get(e.name)] = merged;
				else list.push(merged);
			}
		}
		for (const k of d.cleared || []) delete s[k];
		/* a switch's circuits changed in part: the copy's less those
		 * removed, plus those added, in (in_port, out_port) order */
		for (const p of d.circuits || []) {
			const dev = (s.devices || []).find((x) => x.name === p.device);
			if (!dev) continue;
			const key = (c) => c.in_port + ">" + c.out_port;
			const gone = new Set((p.removed || []).map(key));
			const list = (dev.circuits || []).filter((c) => !gone.has(key(c))).concat(p.added || []);
			list.sort((a, b) => a.in_port - b.in_port || a.out_port - b.out_port);
			dev.circuits = list;
		}
	}

	/* One logged event's place against the copy's: applied (true), already
	 * in it (true), or the copy cannot follow (false: read it again). */
	function follow(seq, log, delta) {
		if (!state || log !== at.log || seq > at.seq + 1) return false;
		if (seq <= at.seq) return true;
		at.seq = seq;
		if (!delta) return true;
		if (delta.read_again) return false;
		applyDelta(state, delta);
		return true;
	}

	/* After a read: the deltas seen since it was answered, applied. */
	function catchUp() {
		for (const r of recent) {
			if (r.log !== at.log || r.seq <= at.seq) continue;
			if (!follow(r.seq, r.log, r.delta)) {
				again = true;
				return;
			}
		}
	}

	function setLive(on, text) {
		const l = $("live");
		l.className = "chip " + (on ? "on" : "off");
		l.textContent = text;
		/* (a replica gone: its label and the alarms say so) */
		const lost = on ? 0 : live.lost || Date.now();
		if (lost !== live.lost) {
			live.lost = lost;
			render();
		}
	}

	async function watch() {
		let wait = 1000, opened = false;
		for (;;) {
			try {
				/* From the first event the replica keeps (the fabric's log:
				 * history from before the page opened), and after a lost
				 * stream from the last one seen (none twice, none missed). */
				const q = "?after_seq=" + pos.seq + (pos.log ? "&log=" + pos.log : "");
				const r = await fetch("/v1/watch" + q, {headers: {Accept: "application/x-ndjson"}});
				if (!r.ok || !r.body) throw new Error("HTTP " + r.status);
				setLive(true, "live");
				wait = 1000;
				/* what happened while it was not open (at the first open,
				 * the read start() made is the copy: the stream's history
				 * brings what came after it) */
				if (opened) {
					needFabric = true;
					refresh();
				}
				opened = true;
				const rd = r.body.getReader(), dec = new TextDecoder();
				let buf = "";
				for (;;) {
					const {value, done} = await rd.read();
					if (done) break;
					buf += dec.decode(value, {stream: true});
					let nl;
					while ((nl = buf.indexOf("\n")) >= 0) {
						const line = buf.slice(0, nl).trim();
						buf = buf.slice(nl + 1);
						if (line) onLine(line);
					}
				}
			} catch (e) {
				/* below: said on the chip, tried again */
			}
			setLive(false, "reconnecting");
			await new Promise((ok) => setTimeout(ok, wait));
			wait = Math.min(wait * 2, 30000);
		}
	}

	function noteTxn(e) {
		if (!e.ticket) return;
		let t = txns.get(e.ticket);
		if (!t) {
			if (!/REQUEST_(QUEUED|DONE|REFUSED)|TRANSACTION_STARTED|FAILURE_(REPORTED|RESTORED)/.test(e.kind)) return;
			t = {ticket: Number(e.ticket)};
			txns.set(e.ticket, t);
			if (txns.size > MAX_TXNS) txns.delete(txns.keys().next().value);
		}
		/* "ticket N: WHAT from WHO [through the gateway] (uid U pid P) (K ahead)" */
		const m = /^ticket \d+: (.*) from (.*?) \(\d+ ahead\)$/.exec(e.message || "");
		if (e.kind === "KIND_REQUEST_QUEUED" && m) {
			t.what = m[1];
			t.who = m[2].replace(/ through the gateway.*$/, "").replace(/^uid (\d+) pid \d+$/, "uid:$1");
		} else if (e.kind === "KIND_TRANSACTION_STARTED") {
			t.started = Number(e.time_unix_ms);
			t.ops = e.message;
			t.outcome = "running";
		} else if (/TRANSACTION_(COMMITTED|ROLLED_BACK)|REQUEST_CANCELLED/.test(e.kind)) {
			t.outcome = e.kind.replace(/^KIND_(TRANSACTION_|REQUEST_)?/, "").toLowerCase().replace("_", " ");
			if (t.started) t.took = Number(e.time_unix_ms) - t.started;
		} else if (e.kind === "KIND_REQUEST_REFUSED") {
			/* why, as ofcd said it */
			t.outcome = "refused: " + (e.message || "");
			t.refused = true;
		} else if (/REQUEST_DONE|FAILURE_(REPORTED|RESTORED)/.test(e.kind) && !t.outcome) {
			t.outcome = e.kind === "KIND_REQUEST_DONE" ? "done" : e.kind.replace(/^KIND_/, "").toLowerCase().replace("_", " ");
		}
	}

	function onLine(line) {
		let j;
		try {
			j = JSON.parse(line);
		} catch (e) {
			return;
		}
		if (!j.event) return;
		const e = j.event;
		/* the log's place: a duplicate (a stream resumed) is dropped */
		let fresh = true;
		if (e.seq !== undefined) {
			const seq = Number(e.seq), log = String(e.log || "");
			if (log === pos.log && seq <= pos.seq) return;
			pos.seq = seq;
			pos.log = log;
			recent.push({seq, log, delta: e.delta || null});
			if (recent.length > MAX_RECENT) recent.shift();
			fresh = follow(seq, log, e.delta || null);
			/* A tenant's state has no place in the log (its events are a
			 * part of it): an event from before its read, as the stream's
			 * history replays, is in it already (2 s for the clocks). */
			if (!fresh && state && state.tenant && Number(e.time_unix_ms || 0) < readAt - 2000) fresh = true;
		}
		events.unshift({kind: e.kind || "", time_unix_ms: e.time_unix_ms, text: j.message || e.message || ""});
		if (events.length > MAX_EVENTS) events.length = MAX_EVENTS;
		noteTxn(e);
		if (/CONFIG_APPLIED|RECOVERED/.test(e.kind || "")) {
			needFabric = true;
			fresh = false;
		}
		/* what a delta does not carry but the events say: a transaction's
		 * end, a queued request's */
		if (state && /TRANSACTION_(COMMITTED|ROLLED_BACK)/.test(e.kind || "")) delete state.transaction;
		if (state && e.ticket && /REQUEST_(DONE|REFUSED|CANCELLED)|FAILURE_(REPORTED|RESTORED)/.test(e.kind || ""))
			state.queue = (state.queue || []).filter((q) => String(q.ticket) !== String(e.ticket));
		/* the workload's schedule re-planned or landed (a delta does not
		 * carry it: each replica computes its own) */
		if (e.kind === "KIND_SCHEDULE_REPLANNED" && state) {
			delete state.schedule_computing_since_unix_ms;
			if (e.schedule) state.schedule = e.schedule; /* (absent: none survives, or too large for an event) */
		}
		if (e.kind === "KIND_LEADER_CHANGED" && state && state.cluster) {
			/* who leads now, and this replica's role: named at once */
			state.cluster.leader = e.leader;
			if (e.role) state.cluster.role = e.role;
		}
		/* (a ticket's event changes the transactions' table, which no
		 * delta carries: a refusal's reason shows at once) */
		if (state && (e.delta || e.ticket || e.kind === "KIND_LEADER_CHANGED" || e.kind === "KIND_SCHEDULE_REPLANNED")) render();
		else renderEvents();
		if (!fresh) refresh();
	}

	async function start() {
		const r = await api("/ui/whoami");
		if (r.ok) {
			me = r.j;
			$("who").textContent = me.identity + " · " + me.role + (me.partitions.length ? " · " + me.partitions.join(",") : "");
			document.body.setAttribute("data-role", me.role);
		} else showError("who: " + (r.j.message || "HTTP " + r.status));
		await refresh();
		watch();
		readWiring();
	}

	document.addEventListener("DOMContentLoaded", start);
})();
