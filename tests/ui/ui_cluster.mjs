// The operator's page before replicated ofcd (tests/integration/
// test_ui_cluster.sh): opened on a follower's gateway, it names the leader;
// once the leader is killed (UI_KILL_PID, kill -9), it names the new one;
// its device row shows the leader's last contact with the device, named;
// its wiring names the leader (whose agents report to it) and links to
// the leader's page.
// The dead leader's own page (UI_LEADER_URL, its gateway) then says its
// replica is not answering. Environment: UI_URL, UI_LEADER_URL, UI_PKI
// (admin.pem, admin.key), UI_LEADER,
// UI_KILL_PID, UI_NEW_LEADER, UI_SHOTS, CHROMIUM. Prints failed checks and
// "ui-driver: P passed, F failed"; exits 1 if any failed.
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

const env = (k) => {
	if (!process.env[k]) throw new Error(`${k} is not set`);
	return process.env[k];
};
let passed = 0, failed = 0;
function check(cond, what, detail) {
	if (cond) passed++;
	else {
		failed++;
		console.log(`FAIL: ${what}` + (detail ? `\n      ${detail}` : ""));
	}
}

async function main() {
	const URL = env("UI_URL"), PKI = env("UI_PKI"), SHOTS = env("UI_SHOTS");
	mkdirSync(SHOTS, { recursive: true });
	const browser = await chromium.launch({ executablePath: env("CHROMIUM"), args: ["--no-sandbox"] });
	const errors = [];
	try {
		const LURL = env("UI_LEADER_URL");
		const ctx = await browser.newContext({
			ignoreHTTPSErrors: true,
			clientCertificates: [{ origin: URL, certPath: `${PKI}/admin.pem`, keyPath: `${PKI}/admin.key` },
				{ origin: LURL, certPath: `${PKI}/admin.pem`, keyPath: `${PKI}/admin.key` }],
		});
		const page = await ctx.newPage();
		// the leader's own gateway too: its page outlives its replica
		const lpage = await ctx.newPage();
		await lpage.goto(LURL + "/ui/");
		await lpage.locator(`#replicas [data-this-replica="${env("UI_LEADER")} leader"]`).waitFor({ timeout: 10000 }).catch(() => {});
		page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
		page.on("pageerror", (e) => errors.push(e.message));
		await page.goto(URL + "/ui/");
		const leader = `#replicas [data-leader="${env("UI_LEADER")}"]`;
		await page.locator(leader).waitFor({ timeout: 10000 }).catch(() => {});
		check((await page.locator(leader).count()) === 1, `the page names ${env("UI_LEADER")} as the leader`,
			await page.locator("#replicas").textContent());
		// each replica listed with its last contact (its registration's last write)
		for (const r of [env("UI_LEADER"), env("UI_NEW_LEADER")]) {
			const lc = Number(await page.locator(`#replicas [data-replica="${r}"]`).getAttribute("data-last-contact", { timeout: 5000 }).catch(() => 0));
			check(lc > Date.now() - 30000 && lc <= Date.now() + 1000, `the page lists replica ${r} with a recent last contact`,
				`${lc} (now ${Date.now()}): ${await page.locator("#replicas").textContent()}`);
		}
		// a follower talks to no device: its row shows the leader's last
		// contact, named (the leader's registration carries it)
		const dev = `#devices [data-contact-by="${env("UI_LEADER")}"]`;
		await page.locator(dev).first().waitFor({ timeout: 15000 }).catch(() => {});
		const dlc = Number(await page.locator(dev).first().getAttribute("data-last-contact", { timeout: 1000 }).catch(() => 0));
		const drow = await page.locator("#devices").textContent();
		check(dlc > Date.now() - 60000 && dlc <= Date.now() + 1000 && drow.includes(`(${env("UI_LEADER")})`) && !drow.includes("never"),
			`the follower's page shows the device's last contact by ${env("UI_LEADER")}`, `${dlc}: ${drow}`);
		// a follower's lease keeps its registration alone: no "lease 0.4 of
		// 2 s" as if its leadership ran out; the leader's row has its lease
		// (read again until a deadline: a read of the registrations on a
		// loaded machine may lack the leader's lease, and the next has it)
		let head, frow, lrow, leases = false;
		for (const end = Date.now() + 15000; !leases && Date.now() < end; ) {
			head = await page.locator("#replicas p").first().textContent();
			frow = await page.locator(`#replicas tr:has([data-replica="${env("UI_NEW_LEADER")}"])`).textContent().catch(() => "");
			lrow = await page.locator(`#replicas tr:has([data-replica="${env("UI_LEADER")}"])`).textContent().catch(() => "");
			leases = /this replica: \S+ \(follower\)/.test(head) && !/lease [0-9.]+ of/.test(head) && /registered/.test(frow) &&
				/[0-9]\.[0-9] s/.test(lrow);
			if (!leases) await page.waitForTimeout(250);
		}
		check(leases, "the follower's page shows no lease for a follower, the leader's for the leader",
			`${head} | ${frow} | ${lrow}`);
		// the wiring is the leader's (the agents report to it): the
		// follower's page names it and links to its page, and does not say
		// that no agent reported
		const wl = `#wiring [data-wiring-leader="${env("UI_LEADER")}"]`;
		await page.locator(wl).waitFor({ timeout: 20000 }).catch(() => {});
		const wtext = await page.locator("#wiring").textContent();
		const whref = await page.locator(`${wl} a`).getAttribute("href", { timeout: 1000 }).catch(() => "");
		check((await page.locator(wl).count()) === 1 && !/no host's agent has reported/.test(wtext) &&
			whref === LURL.replace(/\/+$/, "") + "/ui/", `the follower's wiring names ${env("UI_LEADER")}, whose page has the verdict`,
			`${wtext} (${whref})`);
		await page.screenshot({ path: `${SHOTS}/replicas-before.png`, fullPage: true });
		const t0 = Date.now();
		process.kill(Number(env("UI_KILL_PID")), "SIGKILL");
		const next = `#replicas [data-leader="${env("UI_NEW_LEADER")}"]`;
		await page.locator(next).waitFor({ timeout: 20000 }).catch(() => {});
		check((await page.locator(next).count()) === 1, `after kill -9 of the leader, the page names ${env("UI_NEW_LEADER")}`,
			await page.locator("#replicas").textContent());
		console.log(`ui-driver: the new leader named ${Date.now() - t0} ms after the kill`);
		// the page shows what the state carries through the failover and the
		// new leader's deltas: once the new leader talked to the switch, its
		// last contact, as a fresh read has it (before: "never" until the
		// page was reloaded: a delta does not carry it)
		const fresh = async () => (await page.evaluate(async () => {
			const r = await fetch("/v1/state", { cache: "no-store" });
			return (await r.json()).state.devices[0].last_contact_unix_ms || 0;
		}));
		await page.evaluate(async () => fetch("/v1/reconfigure", { method: "POST", headers: { "Content-Type": "application/json" },
			body: JSON.stringify({ topology: "circulant:64:3,8" }) }).then((r) => r.status));
		let alc = 0, flc = 0;
		for (let i = 0; i < 40 && !(flc && alc); i++) {
			await page.waitForTimeout(500);
			flc = Number(await fresh().catch(() => 0));
			alc = Number(await page.locator("#devices [data-last-contact]").first().getAttribute("data-last-contact", { timeout: 1000 }).catch(() => 0));
		}
		const after = await page.locator("#devices").textContent();
		check(flc > 0 && alc > 0 && !after.includes("never"), "after the failover the page shows the switch's last contact a fresh read has",
			`page ${alc}, fresh read ${flc}: ${after}`);
		await page.screenshot({ path: `${SHOTS}/replicas-after.png`, fullPage: true });
		// the dead leader's page: its replica named as silent, not as leading,
		// and an alarm that the page hears nothing
		const silent = `#replicas [data-this-replica="${env("UI_LEADER")} silent"]`;
		await lpage.locator(silent).waitFor({ timeout: 15000 }).catch(() => {});
		const lhead = await lpage.locator("#replicas p").first().textContent().catch(() => "");
		check((await lpage.locator(silent).count()) === 1 && /NOT ANSWERING since/.test(lhead) && !/\(leader\)/.test(lhead.split("this replica:")[1] || "") &&
			(await lpage.locator('#alarms tr:has-text("this page hears nothing") [data-severity="major"]').count()) === 1,
			"the dead leader's page says its replica is not answering, not that it leads", lhead);
		await lpage.screenshot({ path: `${SHOTS}/replicas-dead.png`, fullPage: true });
		// (a stream cut off as its replica goes is not an error the page logs)
		check(errors.length === 0, "the page logs no console errors", errors.slice(0, 3).join(" | "));
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
