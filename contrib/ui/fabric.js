/* ofc's operator page: the fabric as a picture (SVG). ui.js builds a model
 * of the state and calls ofcFabric.draw(container, model); this file only
 * lays it out and draws it:
 *   - hosts as the topology lays them out: a torus or mesh (torus:AxB...,
 *     mesh:...) as a grid, its last dimension across; anything else on a
 *     circle up to 64 hosts, in columns past that;
 *   - circuits as lines between their hosts, coloured by the partition
 *     holding both ends (grey: the fabric's own);
 *   - failed hosts filled red, hosts with a failed port ringed red, failed
 *     links dashed red, hosts whose circuits moved to a spare port ringed
 *     amber;
 *   - past AGGREGATE hosts, no lines: each host a small cell and each held
 *     partition one block over its hosts, so 1,024 hosts stay legible.
 * Switches are bars of their ports in use, by partition (drawSwitches). */
"use strict";

(function () {
	const NS = "http://www.w3.org/2000/svg";
	const AGGREGATE = 256;

	function el(name, attrs, parent) {
		const e = document.createElementNS(NS, name);
		for (const k in attrs) e.setAttribute(k, attrs[k]);
		if (parent) parent.appendChild(e);
		return e;
	}

	/* The grid a torus or mesh spec names: [rows, cols], or null. */
	function gridOf(spec, n) {
		const m = /^(torus|mesh|grid|twisted-torus)[^:]*:([0-9x]+)/.exec(spec || "");
		if (!m) return null;
		const dims = m[2].split("x").map(Number).filter((d) => d > 0);
		if (dims.length < 2) return null;
		const cols = dims[dims.length - 1];
		const rows = dims.slice(0, -1).reduce((a, b) => a * b, 1);
		return rows * cols === n ? [rows, cols] : null;
	}

	/* Positions of n hosts: {xs, ys, w, h, cell}. */
	function layout(spec, n) {
		const g = gridOf(spec, n);
		const small = n > AGGREGATE;
		if (g) {
			const cell = small ? 12 : 34;
			const xs = [], ys = [];
			for (let i = 0; i < n; i++) {
				xs.push(20 + (i % g[1]) * cell);
				ys.push(20 + Math.floor(i / g[1]) * cell);
			}
			return {xs, ys, w: 40 + g[1] * cell, h: 40 + g[0] * cell, cell};
		}
		if (n <= 64) {
			const r = Math.max(60, n * 7), xs = [], ys = [];
			for (let i = 0; i < n; i++) {
				const a = (2 * Math.PI * i) / n - Math.PI / 2;
				xs.push(r + 30 + r * Math.cos(a));
				ys.push(r + 30 + r * Math.sin(a));
			}
			return {xs, ys, w: 2 * r + 60, h: 2 * r + 60, cell: 24};
		}
		const cols = Math.ceil(Math.sqrt(n)), cell = small ? 12 : 30;
		const xs = [], ys = [];
		for (let i = 0; i < n; i++) {
			xs.push(20 + (i % cols) * cell);
			ys.push(20 + Math.floor(i / cols) * cell);
		}
		return {xs, ys, w: 40 + cols * cell, h: 40 + Math.ceil(n / cols) * cell, cell};
	}

	function drawHost(svg, m, name, x, y, size, label) {
		const g = el("g", {class: "host", "data-host": name}, svg);
		const f = m.failed;
		if (f.hosts.has(name)) {
			g.classList.add("down");
			g.setAttribute("data-failed", "host");
		} else if (f.ports.has(name)) {
			g.classList.add("failed");
			g.setAttribute("data-failed", f.ports.get(name).join(","));
		}
		if (m.moved.has(name)) g.classList.add("moved");
		el("rect", {x: x - size / 2, y: y - size / 2, width: size, height: size, rx: 3}, g);
		/* the hover: the host, its partition, then each port's circuit
		 * (where it leads, on which switch ports) and its failure */
		const t = el("title", {}, g);
		const part = m.hostPart && m.hostPart.get(name);
		const lines = [name + (part ? " · partition " + part : "") +
			(f.hosts.has(name) ? " · FAILED" : "") + (m.moved.has(name) ? " · moved to a spare" : "")];
		const failedPorts = new Set(f.ports.get(name) || []);
		for (const [p, text] of (m.ports && m.ports.get(name)) || [])
			lines.push(text + (failedPorts.has(String(p)) ? " · FAILED" : ""));
		for (const p of failedPorts)
			if (!((m.ports && m.ports.get(name)) || []).some(([q]) => String(q) === p)) lines.push("port " + p + " · FAILED");
		if (lines.length === 1 && !small(m)) lines.push("no circuit");
		t.textContent = lines.join("\n");
		g.setAttribute("data-ports", String(((m.ports && m.ports.get(name)) || []).length));
		if (label) {
			const tx = el("text", {x: x, y: y + 3, "text-anchor": "middle"}, g);
			tx.textContent = name;
		}
	}

	function small(m) {
		return m.hosts.length > AGGREGATE;
	}

	function draw(container, m) {
		const n = m.hosts.length;
		const L = layout(m.spec, n);
		/* drawn to the section's width (ui.css), up to 60% of the
		 * window's height: an 8x8 grid is not 300 px in a 1,000 px box
		 * (more costs the browser's paint at every redraw) */
		const svg = el("svg", {viewBox: "0 0 " + L.w + " " + L.h, role: "img"});
		svg.setAttribute("data-width", String(L.w));
		svg.setAttribute("aria-label", "the fabric: " + n + " hosts, " + m.circuits.length + " circuits");
		const at = new Map();
		m.hosts.forEach((h, i) => at.set(h, i));
		const small = n > AGGREGATE;
		if (!small) {
			const lines = el("g", {class: "circuits"}, svg);
			for (const c of m.circuits) {
				const a = at.get(c.a), b = at.get(c.b);
				if (a === undefined || b === undefined) continue;
				el("line", {
					class: "circuit",
					x1: L.xs[a], y1: L.ys[a], x2: L.xs[b], y2: L.ys[b],
					stroke: m.color(c.partition),
					"data-partition": c.partition || "",
				}, lines);
			}
		} else {
			for (const [name, p] of m.partitions) {
				const idx = p.hosts.map((h) => at.get(h)).filter((i) => i !== undefined);
				if (!idx.length) continue;
				const xs = idx.map((i) => L.xs[i]), ys = idx.map((i) => L.ys[i]);
				const x0 = Math.min(...xs) - L.cell / 2, y0 = Math.min(...ys) - L.cell / 2;
				const b = el("rect", {
					class: "block", x: x0, y: y0,
					width: Math.max(...xs) - x0 + L.cell / 2, height: Math.max(...ys) - y0 + L.cell / 2,
					fill: m.color(name), stroke: m.color(name), "data-partition": name,
				}, svg);
				const t = el("title", {}, b);
				t.textContent = name + ": " + p.hosts.length + " hosts, " + (p.circuits || 0) + " circuits";
			}
		}
		for (const [u, v] of m.failed.links) {
			const a = at.get(u), b = at.get(v);
			if (a === undefined || b === undefined) continue;
			el("line", {class: "link-failed", x1: L.xs[a], y1: L.ys[a], x2: L.xs[b], y2: L.ys[b],
				    "data-link": u + "-" + v}, svg);
		}
		const size = small ? L.cell - 2 : Math.min(22, L.cell - 6);
		m.hosts.forEach((h, i) => drawHost(svg, m, h, L.xs[i], L.ys[i], size, !small));
		container.replaceChildren(svg);
	}

	/* Each switch a bar: ports in use by partition, of its ports; port
	 * alarms as red ticks where the port sits. */
	function drawSwitches(container, switches, color) {
		const out = [];
		for (const s of switches) {
			const row = document.createElement("div");
			row.className = "switch";
			row.setAttribute("data-switch", s.name);
			const used = s.used;
			const total = s.ports || used || 1;
			const label = document.createElement("div");
			label.textContent = s.name + ": " + used + (s.ports ? " of " + s.ports : "") + " ports in use" +
				(s.alarms.length ? ", " + s.alarms.length + " alarm" + (s.alarms.length > 1 ? "s" : "") : "");
			const bar = document.createElement("div");
			bar.className = "bar";
			for (const [p, k] of s.byPartition) {
				const seg = document.createElement("span");
				seg.style.width = (100 * k) / total + "%";
				seg.style.background = color(p);
				seg.title = (p || "fabric") + ": " + k + " ports";
				bar.appendChild(seg);
			}
			for (const a of s.alarms) {
				const t = document.createElement("i");
				t.className = "alarm";
				t.style.left = (100 * (a.port - 1)) / total + "%";
				t.title = "port " + a.port + " " + (a.kind || "") + (a.host_port ? " (" + a.host_port + ")" : "");
				bar.appendChild(t);
			}
			/* (ports unknown, as on a tenant's page: no bar drawn full) */
			if (s.ports) row.append(label, bar);
			else row.append(label);
			out.push(row);
		}
		container.replaceChildren(...out);
	}

	window.ofcFabric = {draw, drawSwitches, layout, gridOf};
})();
