// Drives ofc-gateway's page (contrib/ui) in Debian's chromium with
// Playwright (playwright-core, pinned in package-lock.json), a client
// certificate a context: as admin, tenant and read-only. Run by
// tests/integration/test_ui.sh, which makes the certificates and starts
// ocs-emu, ofcd and the gateway; it passes them in the environment:
//   UI_URL     the gateway (https://127.0.0.1:PORT)
//   UI_PKI     the certificates: NAME.pem and NAME.key, ca.pem
//   UI_OFC     the ofc CLI; UI_SOCK ofcd's socket (ofc fail, as an operator)
//   UI_SHOTS   where the screenshots go
//   CHROMIUM   the browser
// Prints one line a failed check ("FAIL: ...") and last
// "ui-driver: P passed, F failed"; exits 1 if any failed.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

const env = (k) => {
	if (!process.env[k]) throw new Error(`${k} is not set`);
	return process.env[k];
};
const URL = env("UI_URL"), PKI = env("UI_PKI"), OFC = env("UI_OFC"), SOCK = env("UI_SOCK");
const SHOTS = env("UI_SHOTS");
// How long a page may take to mark a failure: a deadline (15 s) unless a
// benchmark asks a bound; the time taken is printed, never judged in make
// test (a loaded machine's latency is not the page's).
const MARK_WITHIN = Number(process.env.UI_MARK_WITHIN_MS || 15000);
let passed = 0, failed = 0;

function check(cond, what, detail) {
	if (cond) passed++;
	else {
		failed++;
		console.log(`FAIL: ${what}` + (detail ? `\n      ${detail}` : ""));
	}
}

// The API as NAME, with curl (what an operator's script or Slurm does).
function api(who, path, body) {
	const args = ["-sS", "--cacert", `${PKI}/ca.pem`, "--cert", `${PKI}/${who}.pem`, "--key", `${PKI}/${who}.key`];
	if (body !== undefined) args.push("-X", "POST", "-d", JSON.stringify(body));
	return JSON.parse(execFileSync("curl", [...args, URL + path], { encoding: "utf8" }));
}

const consoleErrors = new Map();

// prep(page): before the page is opened (a route to rewrite an answer); its
// console errors are kept under who-prep.
async function open(browser, who, prep = null) {
	const ctx = await browser.newContext({
		ignoreHTTPSErrors: true, // the server's certificate is the test CA's
		// the tenant's as the PKCS#12 the docs have an operator import
		clientCertificates: [who === "tenant-a"
			? { origin: URL, pfxPath: `${PKI}/${who}.p12`, passphrase: "PASSWORD" }
			: { origin: URL, certPath: `${PKI}/${who}.pem`, keyPath: `${PKI}/${who}.key` }],
		viewport: { width: 1280, height: 900 },
	});
	const page = await ctx.newPage();
	const key = prep ? who + "-prep" : who;
	consoleErrors.set(key, []);
	page.on("console", (m) => m.type() === "error" && consoleErrors.get(key).push(m.text()));
	// the page's reads of the state: each request, and whether it was
	// conditional (If-None-Match); its reads of the wiring (every 5 s,
	// apart: no event carries it) counted on their own
	page.stateReads = [];
	page.wiringReads = 0;
	page.on("request", async (r) => {
		if (!/\/v1\/state/.test(r.url())) return;
		if (/with_wiring/.test(r.url())) return void page.wiringReads++;
		const h = await r.allHeaders().catch(() => ({}));
		page.stateReads.push({ url: r.url(), conditional: Boolean(h["if-none-match"]) });
	});
	page.on("pageerror", (e) => consoleErrors.get(key).push(e.message));
	if (prep) await prep(page);
	await page.goto(URL + "/ui/");
	await page.locator("#live.on").waitFor({ timeout: 10000 });
	return page;
}

// Wait until sel is there (or gone: state "detached"); the time it took, or -1.
async function waitFor(page, sel, ms, state = "attached") {
	const t0 = Date.now();
	try {
		await page.locator(sel).first().waitFor({ state, timeout: ms });
		return Date.now() - t0;
	} catch {
		return -1;
	}
}

// The wiring as h1's agent reports it (ReportLinks with h1's host
// certificate, as ofc-hostd sends it): one port hears its circuit's source
// (confirmed), one hears another circuit's source (miswired, named), one
// is left out (dark), then reported down (a failure its host made). The
// page reads the wiring every 5 s and redraws it: every check waits for
// its selector, the expected text in it, until a deadline.
async function wiringChecks(admin, reader, tenant) {
	const WITHIN = 20000;
	const text = async (p, sel) => (await p.locator(sel).textContent({ timeout: 2000 }).catch(() => "(none)")).slice(0, 400);
	const wired = api("admin", "/v1/state?with_wiring=true").state.wiring || {};
	const ends = (wired.links || []).filter((l) => l.dst.startsWith("h1:"));
	check(ends.length >= 3, "the admin's state has the wiring of h1's circuits", JSON.stringify(wired).slice(0, 300));
	if (ends.length < 3) return;
	const hp = (s) => ({ host: s.split(":")[0], port: Number(s.split(":")[1]) });
	const [good, wrong, gone] = ends;
	const report = (down) => api("host-h1", "/v1/report-links", {
		host: "h1", lldp_running: true, ports: [
			{ port: hp(good.dst).port, up: true, neighbour_host: hp(good.src).host, neighbour_port: hp(good.src).port },
			{ port: hp(wrong.dst).port, up: true, neighbour_host: hp(gone.src).host, neighbour_port: hp(gone.src).port },
			...(down ? [{ port: hp(gone.dst).port, up: false }] : [])],
	});
	const r = report(false);
	check(r.status === "STATUS_OK", "h1's agent's report is taken", JSON.stringify(r).slice(0, 300));
	const row = (d, verdict, text) => `#wiring tr:has([data-link="${d}"][data-verdict="${verdict}"])` + (text ? `:has-text("${text}")` : "");
	for (const [who, p] of [["admin", admin], ["reader", reader]]) {
		const t = await Promise.all([
			waitFor(p, row(good.dst, "confirmed", good.src), WITHIN),
			waitFor(p, row(wrong.dst, "miswired", "where the record's circuits give"), WITHIN),
			waitFor(p, row(gone.dst, "dark"), WITHIN),
			waitFor(p, '#wiring p[data-miswired="1"]:has-text("1 miswired")', WITHIN),
		]);
		check(t.every((x) => x >= 0), `the ${who}'s page shows ${good.dst} confirmed, ${wrong.dst} miswired hearing ${gone.src} (named), ${gone.dst} dark`,
			`${t} ms (-1: not shown); ${await text(p, "#wiring")}`);
		check((await waitFor(p, `#alarms tr:has-text("miswired: ${gone.src} reaches ${wrong.dst}") [data-severity="major"]`, WITHIN)) >= 0,
			`the ${who}'s alarm list names the miswired link`, await text(p, "#alarms"));
	}
	// a tenant: ofcd answers its state without the wiring, and its page
	// neither asks for it nor shows it
	check(api("tenant-a", "/v1/state?with_wiring=true").state.wiring === undefined, "a tenant's state has no wiring, asked for it");
	check(tenant.wiringReads === 0 && (await tenant.locator("#wiring-section").isHidden().catch(() => true)) &&
		(await tenant.locator("#wiring [data-verdict]").count()) === 0 && !/miswired/.test(await tenant.locator("body").textContent()),
		"the tenant's page never reads the wiring and shows none", `${tenant.wiringReads} reads`);
	check(admin.wiringReads > 0, "the admin's page reads the wiring", `${admin.wiringReads} reads`);
	// A port its host reports down: a failure its host made, said so in
	// the failures' table. (Reported again until ofcd takes it: a report
	// within the hold-down after a commit is the move's doing, not a failure.)
	const until = Date.now() + WITHIN;
	let by = [];
	while (!by.includes(gone.dst) && Date.now() < until) {
		report(true);
		by = api("admin", "/v1/state").state.failed_by_host || [];
		if (!by.includes(gone.dst)) await admin.waitForTimeout(500);
	}
	check(by.includes(gone.dst), `${gone.dst} reported down by its agent is a failure its host made`, JSON.stringify(by));
	check((await waitFor(admin, `#failures tr:has([data-by-host="${gone.dst}"]):has-text("${gone.dst}")`, WITHIN)) >= 0,
		`the admin's failures table says its host failed ${gone.dst}`, await text(admin, "#failures"));
}

async function main() {
	mkdirSync(SHOTS, { recursive: true });
	const browser = await chromium.launch({ executablePath: env("CHROMIUM"), args: ["--no-sandbox"] });
	try {
		const admin = await open(browser, "admin");
		const reader = await open(browser, "reader");
		const tenant = await open(browser, "tenant-a");

		// Opening reads the state once (the watch's history brings what came
		// after: before, every page read it two or three times, 1-1.5 MB
		// gzipped each at 8,192 hosts)
		await admin.waitForTimeout(1500);
		for (const [who, p] of [["admin", admin], ["reader", reader], ["tenant", tenant]])
			check(p.stateReads.length === 1, `the ${who}'s page reads the state once as it opens`, JSON.stringify(p.stateReads));

		// Who each is shown as.
		check((await admin.getAttribute("body", "data-role")) === "admin", "the admin's page says admin");
		check((await reader.getAttribute("body", "data-role")) === "read-only", "the reader's page says read-only");
		check((await tenant.getAttribute("body", "data-role")) === "tenant", "the tenant's page says tenant");
		check(/64 hosts/.test(await admin.locator("#fabric-topology").textContent()), "the admin sees the fabric's 64 hosts",
			await admin.locator("#fabric-topology").textContent());
		check((await admin.locator('svg g.host[data-host="h63"]').count()) === 1, "h63 is drawn for the admin");
		check((await admin.locator("svg line.circuit").count()) === 128, "jobA's 128 circuits are drawn",
			`${await admin.locator("svg line.circuit").count()} circuits`);
		const bar = await admin.locator('#switches [data-switch="ocs0"]').textContent();
		check(/^ocs0: 128 of 256 ports in use/.test(bar), "ocs0's bar: jobA's 32 hosts hold 128 of its 256 ports", bar);

		// A failure reported through the API: the port is marked on every
		// page that may see it, with no reload.
		const t0 = Date.now();
		execFileSync(OFC, ["--socket", SOCK, "fail", "h5:0"], { stdio: "ignore" });
		const answered = Date.now() - t0;
		const sel = 'svg g.host[data-host="h5"][data-failed="0"]';
		const [ta, tr] = await Promise.all([waitFor(admin, sel, MARK_WITHIN), waitFor(reader, sel, MARK_WITHIN)]);
		const took = Date.now() - t0;
		check(ta >= 0 && tr >= 0, `h5:0 is marked failed with no reload (within ${MARK_WITHIN} ms of ofc fail)`,
			`admin ${ta} ms, reader ${tr} ms (-1: not marked)`);
		// A link and a whole host: the link dashed, the host filled.
		execFileSync(OFC, ["--socket", SOCK, "fail", "h8-h9", "h60"], { stdio: "ignore" });
		check((await waitFor(admin, 'svg line.link-failed[data-link="h8-h9"]', MARK_WITHIN)) >= 0 &&
			(await waitFor(admin, 'svg g.host.down[data-host="h60"]', MARK_WITHIN)) >= 0,
			"a failed link is drawn dashed and a failed host filled");
		console.log(`ui-driver: h5:0 marked ${took} ms after ofc fail began (it answered in ${answered} ms)`);
		// The alarm list: each failure in effect, a major one, with its age.
		await waitFor(admin, '#alarms tr:has-text("failed: h60")', 5000);
		const alarms = await admin.locator("#alarms").textContent();
		check((await admin.locator('#alarms tr:has-text("failed: h5:0") [data-severity="major"]').count()) === 1 &&
			(await admin.locator('#alarms tr:has-text("failed: h60") [data-severity="major"]').count()) === 1 &&
			/failed: h5:0[0-9]+ s/.test(alarms),
			"the alarm list has h5:0 and h60 failed, major, with their age", alarms.slice(0, 600));
		// The gateway's CRL (test_ui.sh's: nextUpdate in 12 h): a warning
		// from a day before; past it (whoami rewritten to say 2 h ago), a
		// major alarm with its age.
		check((await admin.locator('#alarms tr:has-text("CRL reaches its nextUpdate") [data-severity="warning"]').count()) === 1,
			"the alarm list warns of the CRL's nextUpdate within a day", alarms.slice(0, 600));
		const late = await open(browser, "admin", (p) => p.route("**/ui/whoami", async (route) => {
			const res = await route.fetch();
			const j = await res.json();
			j.crl_next_update = Math.floor(Date.now() / 1000) - 7200;
			await route.fulfill({ response: res, json: j });
		}));
		await waitFor(late, '#alarms tr:has-text("CRL is past")', 5000);
		const lateRow = await late.locator('#alarms tr:has-text("CRL is past")').textContent().catch(() => "");
		check((await late.locator('#alarms tr:has-text("CRL is past") [data-severity="major"]').count()) === 1 && /2 h$/.test(lateRow),
			"a CRL past its nextUpdate is a major alarm, 2 h old", lateRow || (await late.locator("#alarms").textContent()).slice(0, 600));
		await late.context().close();

		// A partition of its own, started by the tenant through the API (as
		// its Slurm prolog would), and one of the admin's: each page sees
		// what its role may, the tenant's circuits coloured as its partition.
		const r1 = api("admin", "/v1/reconfigure", { partition: "ops-1", hosts: ["h48", "h49", "h50", "h51"], topology: "ring:4" });
		check(r1.status === "STATUS_OK", "the admin holds ops-1", JSON.stringify(r1).slice(0, 300));
		const r2 = api("tenant-a", "/v1/reconfigure", { partition: "slurm-job-7", hosts: ["h32", "h33", "h34", "h35"], topology: "ring:4" });
		check(r2.status === "STATUS_OK", "the tenant holds slurm-job-7", JSON.stringify(r2).slice(0, 300));
		const job = 'svg line.circuit[data-partition="slurm-job-7"]';
		check((await waitFor(admin, job, 5000)) >= 0 && (await waitFor(tenant, job, 5000)) >= 0,
			"slurm-job-7's circuits are drawn as the partition's on the admin's and the tenant's pages");
		const stroke = await admin.locator(job).first().getAttribute("stroke", { timeout: 2000 });
		const plain = await admin.locator('svg line.circuit[data-partition=""]').first().getAttribute("stroke", { timeout: 2000 });
		check(stroke && stroke !== plain, "slurm-job-7's circuits have a colour of their own", `${stroke} vs ${plain}`);
		check((await admin.locator(job).count()) === 4, "a ring of 4: 4 circuits coloured", `${await admin.locator(job).count()}`);
		// A partition's colour is its name's: the same on the admin's page
		// (which has ops-1 too, first) and the tenant's (which has only
		// slurm-job-7), and after a reload.
		const tstroke = await tenant.locator(job).first().getAttribute("stroke", { timeout: 2000 });
		const before = admin.stateReads.length;
		await admin.reload();
		await admin.locator("#live.on").waitFor({ timeout: 10000 });
		await admin.waitForTimeout(500);
		const reread = admin.stateReads.slice(before);
		check(reread.length === 1 && reread[0].conditional, "a reloaded page reads the state once, conditionally (If-None-Match)",
			JSON.stringify(reread));
		await waitFor(admin, job, 5000);
		const again = await admin.locator(job).first().getAttribute("stroke", { timeout: 2000 });
		check(tstroke === stroke && again === stroke, "slurm-job-7 has one colour on every page and after a reload",
			`admin ${stroke}, tenant ${tstroke}, admin reloaded ${again}`);
		// Per-port detail on hover: the host, its partition, each port's circuit.
		const hover = await admin.locator('svg g.host[data-host="h32"] > title').textContent();
		check(/^h32 · partition slurm-job-7\n/.test(hover) && /\nport [0-3] → h3[3-5]:[0-3] \(ocs0 [0-9]+→[0-9]+, slurm-job-7\)/.test(hover) &&
			/\nport [0-3] ← h3[3-5]:[0-3] \(ocs0 /.test(hover), "h32's hover: its partition and its ports' circuits", hover);
		// A Slurm job's partition shows its job id.
		await waitFor(tenant, '#partitions [data-partition="slurm-job-7"]', 5000);
		check((await tenant.locator('#partitions [data-slurm-job="7"]').count()) === 1 &&
			(await admin.locator('#partitions [data-slurm-job]').count()) === 1,
			"slurm-job-7 is listed as Slurm job 7 (ops-1 as none)");
		await waitFor(admin, '#partitions [data-partition="ops-1"]', 5000);
		// The transactions seen: who asked, what for, what it changed, how long.
		const tx = await admin.locator("#transactions").textContent();
		check(/[0-9]+cn:tenant-areconfigure partition slurm-job-7: ring:4 on 4 hosts4 operations on 1 devicecommitted[0-9.]+ s/.test(tx),
			"the admin's page lists the tenant's transaction: who, what, what changed, outcome, time", tx.slice(0, 600));
		check(/[0-9]+uid:[0-9]+report-failure h5:0/.test(tx), "... and the failure reported on the socket, by uid", tx.slice(0, 600));
		// The tenant's page from the tenant's own state: its partition's
		// schedule, no device figures ("not shown", not "never"), and no
		// switch bar drawn full for the few ports it is shown
		await waitFor(tenant, '#schedule tr:has-text("slurm-job-7")', 5000);
		const tsched = await tenant.locator("#schedule").textContent();
		check(/slurm-job-7.*ring:4, 4 nodes/.test(tsched) && !/^none$/.test(tsched.trim()),
			"the tenant's page shows its partition's schedule", tsched.slice(0, 300));
		check((await tenant.locator('#devices [data-device="ocs0"]').textContent()) === "not shown",
			"the tenant's page says the device's contact is not shown to it", await tenant.locator("#devices").textContent());
		check((await tenant.locator('#switches [data-switch="ocs0"] .bar').count()) === 0,
			"the tenant's page draws no switch bar it cannot know the size of", await tenant.locator("#switches").innerHTML());
		// What ofcd counted talking to ocs0 (GetState's device figures): its
		// last contact recent, its commands counted; a tenant is shown none.
		const dev = '#devices [data-device="ocs0"]';
		await waitFor(admin, `${dev}:not([data-last-contact="0"])`, 5000);
		const lastContact = Number(await admin.locator(dev).getAttribute("data-last-contact", { timeout: 2000 }));
		const commands = Number(await admin.locator(dev).getAttribute("data-commands", { timeout: 2000 }));
		check(lastContact > Date.now() - 60000 && lastContact <= Date.now() + 1000 && commands > 0,
			"the admin's page shows ocs0's last contact (recent) and the commands sent to it",
			`last contact ${lastContact} (now ${Date.now()}), commands ${commands}: ${await admin.locator("#devices").textContent()}`);
		check((await tenant.locator(`${dev}[data-last-contact="0"]`).count()) === 1, "the tenant's page shows no device counts");
		await waitFor(tenant, '#partitions [data-partition="slurm-job-7"]', 5000);
		check((await admin.locator('#partitions [data-partition="ops-1"]').count()) === 1 &&
			(await admin.locator('#partitions [data-partition="slurm-job-7"]').count()) === 1,
			"the admin sees both partitions");
		check((await reader.locator('#partitions [data-partition="ops-1"]').count()) === 1 &&
			(await reader.locator('#partitions [data-partition="slurm-job-7"]').count()) === 1,
			"the reader sees both partitions");
		check((await tenant.locator('#partitions [data-partition="slurm-job-7"]').count()) === 1 &&
			(await tenant.locator('#partitions [data-partition="ops-1"]').count()) === 0,
			"the tenant sees its own partition only");
		const tenantText = await tenant.locator("body").textContent();
		check(!/ops-1|h48|jobB/.test(tenantText) && (await tenant.locator('svg g.host[data-host="h48"]').count()) === 0,
			"nothing of others reaches the tenant's page", String(tenantText.match(/ops-1|h48|jobB/)));

		// Controls: none at all for read-only; the tenant's release of its
		// own and no restore; the admin's restore works from the page.
		check((await reader.locator("button").count()) === 0, "the read-only page has no control",
			`${await reader.locator("button").count()} buttons`);
		check((await tenant.locator('button[data-action="release"][data-arg="slurm-job-7"]').count()) === 1 &&
			(await tenant.locator('button[data-action="restore"]').count()) === 0,
			"the tenant may release its partition and restore nothing");
		await admin.screenshot({ path: `${SHOTS}/admin.png`, fullPage: true });
		// The layout from 800 to 2,560 px wide: nothing wider than the
		// window, the release button in view, the fabric drawn large
		// (an 8x8 grid filled 230 of 1,000 px).
		for (const width of [800, 1280, 1600, 2560]) {
			await tenant.setViewportSize({ width, height: 900 });
			await tenant.waitForTimeout(100);
			const L = await tenant.evaluate(() => {
				const b = document.querySelector('button[data-action="release"][data-arg="slurm-job-7"]');
				const r = b ? b.getBoundingClientRect() : null;
				const sec = document.getElementById("fabric").getBoundingClientRect();
				const hosts = [...document.querySelectorAll("#fabric g.host rect")].map((e) => e.getBoundingClientRect());
				const x0 = Math.min(...hosts.map((h) => h.left)), x1 = Math.max(...hosts.map((h) => h.right));
				const y0 = Math.min(...hosts.map((h) => h.top)), y1 = Math.max(...hosts.map((h) => h.bottom));
				return { scroll: document.documentElement.scrollWidth, inner: window.innerWidth, btn: r && { l: r.left, r: r.right, w: r.width },
					section: sec.width, drawn: Math.max(x1 - x0, y1 - y0), vh: window.innerHeight };
			});
			check(L.scroll <= L.inner && L.btn && L.btn.w > 0 && L.btn.l >= 0 && L.btn.r <= L.inner,
				`at ${width} px: nothing wider than the window, the release button in view`, JSON.stringify(L));
			check(L.drawn >= 0.6 * Math.min(L.section, 0.6 * L.vh),
				`at ${width} px: the fabric drawn in most of the room it has`, JSON.stringify(L));
			// every table whole within its section, every column in view
			// (the admin's Partitions table lost its "at target" column at
			// 1,280 and 800 px)
			await admin.setViewportSize({ width, height: 900 });
			await admin.waitForTimeout(100);
			for (const [who, p] of [["admin", admin], ["tenant", tenant]]) {
				const cut = await p.evaluate(() => [...document.querySelectorAll("section table")]
					.filter((t) => t.getBoundingClientRect().width > 0 && t.scrollWidth > t.closest("section").clientWidth + 1)
					.map((t) => (t.closest("section").querySelector("h2") || {}).textContent + ": " + t.scrollWidth + " > " + t.closest("section").clientWidth));
				check(cut.length === 0, `at ${width} px: every table of the ${who}'s page fits its section`, cut.join("; "));
			}
			if (width === 800 || width === 1600) await tenant.screenshot({ path: `${SHOTS}/tenant-${width}.png`, fullPage: true });
		}
		await tenant.setViewportSize({ width: 1280, height: 900 });
		// docs/ofcd.md's picture: the top of the admin's page, small
		await admin.setViewportSize({ width: 1000, height: 640 });
		await admin.screenshot({ path: `${SHOTS}/docs.png` });
		await admin.setViewportSize({ width: 1280, height: 900 });
		await reader.screenshot({ path: `${SHOTS}/read-only.png`, fullPage: true });
		await tenant.screenshot({ path: `${SHOTS}/tenant.png`, fullPage: true });
		// each asks first: dismissed, nothing is sent; accepted, it is
		let asked = "";
		admin.once("dialog", (d) => { asked = d.message(); d.dismiss(); });
		await admin.locator('button[data-action="restore"][data-arg="h5:0"]').click();
		await admin.waitForTimeout(300);
		check(/h5:0 is in service again\?/.test(asked) && (await admin.locator("#failures", { hasText: "h5:0" }).count()) === 1,
			"the restore asks first, and a No sends nothing", asked);
		admin.on("dialog", (d) => d.accept());
		tenant.on("dialog", (d) => d.accept());
		await admin.locator('button[data-action="restore"][data-arg="h5:0"]').click();
		check((await waitFor(admin, 'svg g.host[data-host="h5"][data-failed]', 3000, "detached")) >= 0,
			"the admin's restore clears h5:0's mark");
		await tenant.locator('button[data-action="release"][data-arg="slurm-job-7"]').click();
		check((await waitFor(admin, job, 5000, "detached")) >= 0, "the tenant's release takes slurm-job-7's circuits away");

		// A churn of partitions held and released (a Slurm day, sped up):
		// the page applies each event's delta and reads the whole state
		// again never, so what it fetches is the events alone, under the
		// goal of 100 KB/s a page; and what it draws is the state a fresh
		// read shows.
		// (the page's requests counted by chromium; the stream's bytes, which
		// chromium counts only once a response ends, by a watch of the same
		// route beside it)
		const cdp = await admin.context().newCDPSession(admin);
		await cdp.send("Network.enable");
		let bytes = 0, stateReads = 0;
		cdp.on("Network.loadingFinished", (e) => { bytes += e.encodedDataLength || 0; });
		cdp.on("Network.requestWillBeSent", (e) => { if (/\/v1\/state/.test(e.request.url) && !/with_wiring/.test(e.request.url)) stateReads++; });
		const seq = api("admin", "/v1/state").state.event_seq || 0;
		const tap = spawn("curl", ["-sSN", "--cacert", `${PKI}/ca.pem`, "--cert", `${PKI}/admin.pem`, "--key", `${PKI}/admin.key`,
			"-H", "Accept-Encoding: gzip", `${URL}/v1/watch?after_seq=${seq}`]);
		let streamed = 0;
		tap.stdout.on("data", (b) => { streamed += b.length; });
		await admin.waitForTimeout(300);
		const c0 = Date.now();
		let held = 0;
		for (let i = 0; i < 12; i++) {
			const hosts = [0, 1, 2, 3].map((k) => "h" + (36 + 4 * (i % 3) + k));
			const name = "churn-" + i;
			if (api("admin", "/v1/reconfigure", { partition: name, hosts, topology: "ring:4" }).status === "STATUS_OK") held++;
			api("admin", "/v1/release-partition", { partition: name });
		}
		await waitFor(admin, '#partitions [data-partition="churn-11"]', 3000, "detached");
		await admin.waitForTimeout(1000); /* the last events drawn */
		const secs = (Date.now() - c0) / 1000;
		tap.kill();
		const rate = (bytes + streamed) / secs;
		console.log(`ui-driver: churn: ${held} partitions held and released in ${secs.toFixed(1)} s; the page fetched ${bytes} bytes in requests and ${streamed} on the watch (${(rate / 1024).toFixed(1)} KB/s), ${stateReads} state reads`);
		check(streamed > 0, "the watch beside the page got the churn's events", `${streamed} bytes`);
		check(held === 12, "the churn's 12 partitions were held", `${held}`);
		check(stateReads === 0, "the page reads the state again not once during the churn (the events' deltas keep it)", `${stateReads} reads`);
		check(rate < 100 * 1024, "the page fetches under 100 KB/s during the churn", `${(rate / 1024).toFixed(1)} KB/s`);
		const fresh = api("admin", "/v1/state").state;
		const drawn = await admin.locator("#partitions [data-partition]").evaluateAll((es) => es.map((e) => e.getAttribute("data-partition")).sort());
		const want = (fresh.held || []).map((h) => h.name).sort();
		check(JSON.stringify(drawn) === JSON.stringify(want), "after the churn the page shows the partitions a fresh read has",
			`${drawn} vs ${want}`);
		const lines = await admin.locator("svg line.circuit").count();
		const circuits = (fresh.devices || []).reduce((n, d) => n + (d.circuits || []).length, 0);
		check(lines === circuits, "... and the circuits a fresh read has", `${lines} drawn, ${circuits} read`);
		await cdp.detach();

		await wiringChecks(admin, reader, tenant);

		// At scale: 1,024 hosts of a torus:32x32 with 4,096 circuits, 256 of
		// the hosts a partition: drawn as cells and a block, no lines, its
		// elements a few per host whatever the circuits (the time is shown,
		// not asserted: this machine's load is not the page's).
		const big = await reader.evaluate(() => {
			const hosts = [], circuits = [], hp = [];
			for (let i = 0; i < 1024; i++) hosts.push("n" + i);
			for (let i = 0; i < 1024; i++)
				for (const d of [1, 32, 1023, 992]) circuits.push({ a: hosts[i], b: hosts[(i + d) % 1024], partition: i < 256 ? "big" : "" });
			for (let i = 0; i < 256; i++) hp.push(hosts[i]);
			const m = {
				hosts, spec: "torus:32x32", circuits, moved: new Set(),
				partitions: new Map([["big", { hosts: hp, circuits: 1024 }]]),
				failed: { hosts: new Set(["n700"]), ports: new Map([["n5", ["0"]]]), links: [] },
				color: (p) => (p ? "#4f9dde" : "#6b7a88"),
			};
			const div = document.createElement("div");
			const t0 = performance.now();
			window.ofcFabric.draw(div, m);
			return {
				ms: performance.now() - t0, hosts: div.querySelectorAll("g.host").length,
				lines: div.querySelectorAll("line.circuit").length, blocks: div.querySelectorAll('rect.block[data-partition="big"]').length,
				down: div.querySelectorAll('g.host.down[data-host="n700"]').length,
				elements: div.querySelectorAll("*").length,
			};
		});
		check(big.hosts === 1024 && big.lines === 0 && big.blocks === 1 && big.down === 1 && big.elements < 8 * 1024,
			"1,024 hosts: drawn as cells with the partition as one block, no circuit lines, a few elements a host", JSON.stringify(big));

		for (const [who, errs] of consoleErrors)
			check(errs.length === 0, `${who}'s page logs no console errors`, errs.slice(0, 3).join(" | "));
	} finally {
		await browser.close();
	}
}

try {
	await main();
} catch (e) {
	check(false, "the driver ran to its end", e.stack || String(e));
}
console.log(`ui-driver: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
