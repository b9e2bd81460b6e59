#!/usr/bin/env node
// tests/browser/admin.test.mjs: the admin HTML view (docs/admin-view.md) in a real
// browser: Debian's Chromium headless driven by playwright-core, against the
// stack tests/e2e/t1300-admin.sh runs it on (that wrapper makes the data
// below and relays these lines). Shows: sign-in through the form (editor,
// admin, viewer) and sign-out; the walkthrough's run page with "first
// synthetic account" and the mock-miss marker; a run launched from the
// scenario page's run form; a comparison launched from the compare form
// (admin) showing #verdict; the module switched off and on from the
// overview; HTML and script payloads shown as text, nothing executed (no
// dialog, no <script>/<img>/... element, no event attribute); on every
// page: no CSP violation, the stylesheet /static/style.css loaded and
// applied, no <script>, and a full-page screenshot into $OLIVARES_ARTIFACTS.
//
// Environment:
//   OLIVARES_URL                 the stack (nginx), e.g. http://127.0.0.1:8080
//   OLV_ADMIN_TOKEN, OLV_EDITOR_TOKEN, OLV_VIEWER_TOKEN   tokens of tenant demo
//   OLV_WALK_SID, OLV_WALK_RID   the walkthrough scenario and its run (variant
//                                candidate: step 1 "first synthetic account",
//                                step 2 a mock miss)
//   OLV_CMP_SID, OLV_CMP_SUITE, OLV_CMP_BASELINE, OLV_CMP_CANDIDATE
//                                a scenario whose comparison baseline ->
//                                candidate on the suite is "improved" (empty
//                                OLV_CMP_SID: no scorer, comparison skipped)
//   OLV_XSS_SID, OLV_XSS_RID, OLV_XSS_PAYLOADS (JSON array), OLV_XSS_NAME,
//   OLV_XSS_VARIANT              the payload scenario (step i: input payload
//                                i; mock i: resource payload i, response
//                                payload i+1; one more mock for the variant)
//                                and its run with variant OLV_XSS_VARIANT
//   OLV_REPLAY_RID               a replay run (optional)
//   OLIVARES_ARTIFACTS           screenshot dir (default artifacts/admin-screenshots)
//   OLV_CHROMIUM                 the browser (default /usr/bin/chromium)
//
// Prints "ok - …" / "not ok - …" lines (and "# " comments); exits 1 on any
// failure.
import { chromium } from 'playwright-core';
import { mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');

let failures = 0;
const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' ~ ').slice(0, 300);
const J = (v) => oneLine(JSON.stringify(v));
function ok(desc) {
	console.log(`ok - ${oneLine(desc)}`);
}
function notOk(desc, why) {
	failures++;
	console.log(`not ok - ${oneLine(desc)}${why ? ` (${oneLine(why)})` : ''}`);
}
function check(desc, cond, why) {
	if (cond) ok(desc);
	else notOk(desc, why);
}
function is(desc, want, got) {
	check(desc, JSON.stringify(want) === JSON.stringify(got), `expected ${J(want)}, got ${J(got)}`);
}
// step DESC FN: run FN; an exception is one failure named DESC
async function step(desc, fn) {
	try {
		await fn();
	} catch (e) {
		notOk(desc, `threw: ${e && e.message ? e.message.split('\n')[0] : e}`);
	}
}

function env(name, fallback) {
	const v = process.env[name];
	if (v !== undefined && v !== '') return v;
	if (fallback !== undefined) return fallback;
	console.log(`not ok - environment: ${name} is not set (run through tests/e2e/t1300-admin.sh)`);
	process.exit(1);
}

const BASE = env('OLIVARES_URL').replace(/\/+$/, '');
const TOKENS = { admin: env('OLV_ADMIN_TOKEN'), editor: env('OLV_EDITOR_TOKEN'), viewer: env('OLV_VIEWER_TOKEN') };
const WALK_SID = env('OLV_WALK_SID');
const WALK_RID = env('OLV_WALK_RID');
const CMP_SID = env('OLV_CMP_SID', '');
const CMP_SUITE = env('OLV_CMP_SUITE', 'walkthrough');
const CMP_BASELINE = env('OLV_CMP_BASELINE', 'candidate');
const CMP_CANDIDATE = env('OLV_CMP_CANDIDATE', 'better');
const XSS_SID = env('OLV_XSS_SID');
const XSS_RID = env('OLV_XSS_RID');
const PAYLOADS = JSON.parse(env('OLV_XSS_PAYLOADS'));
const XSS_NAME = env('OLV_XSS_NAME');
const XSS_VARIANT = env('OLV_XSS_VARIANT');
const REPLAY_RID = env('OLV_REPLAY_RID', '');
const ART = resolve(env('OLIVARES_ARTIFACTS', join(ROOT, 'artifacts', 'admin-screenshots')));
const CHROMIUM = env('OLV_CHROMIUM', '/usr/bin/chromium');
const ID = /^[0-9a-f]{32}$/;

// The API, to confirm what the forms did (Node's fetch)
async function api(role, path) {
	const r = await fetch(BASE + path, { headers: { Authorization: `Bearer ${TOKENS[role]}` } });
	return { status: r.status, body: await r.json().catch(() => null) };
}
async function setModule(enabled) {
	const r = await fetch(`${BASE}/v1/modules/sandbox`, {
		method: 'PUT',
		headers: { Authorization: `Bearer ${TOKENS.admin}`, 'Content-Type': 'application/json' },
		body: JSON.stringify({ enabled }),
	});
	return r.status;
}

let shotN = 0;
const browser = await chromium.launch({
	executablePath: CHROMIUM,
	args: [
		'--headless=new',
		'--no-sandbox',
		'--disable-gpu',
		'--disable-dev-shm-usage',
		'--disable-background-networking',
		'--disable-extensions',
		'--disable-sync',
		'--no-first-run',
		'--no-default-browser-check',
		'--mute-audio',
	],
});
console.log(`# chromium ${browser.version()}, playwright-core, against ${BASE}; screenshots in ${ART}`);
mkdirSync(ART, { recursive: true });
// this run's screenshots only: the previous run's NN-*.png go
for (const f of readdirSync(ART)) if (/^\d\d-.*\.png$/.test(f)) unlinkSync(join(ART, f));

// A browser context of its own (its own cookies) with its listeners.
async function session(label) {
	const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 900 } });
	const page = await context.newPage();
	page.setDefaultTimeout(15000);
	page.setDefaultNavigationTimeout(30000);
	const log = { dialogs: [], csp: [], errors: [], failed: [] };
	page.on('dialog', (d) => {
		log.dialogs.push(`${d.type()}: ${d.message()}`);
		d.dismiss().catch(() => {});
	});
	page.on('console', (m) => {
		const t = m.text();
		if (/Content[- ]Security[- ]Policy|Refused to (load|apply|execute|connect|frame)/i.test(t)) log.csp.push(t);
		else if (m.type() === 'error') log.errors.push(t);
	});
	page.on('pageerror', (e) => log.errors.push(String(e)));
	page.on('requestfailed', (r) => log.failed.push(`${r.url()} ${r.failure() ? r.failure().errorText : ''}`));
	return { label, context, page, log };
}

// The facts of the document in the page (evaluated through the DevTools
// protocol, which the page's CSP does not govern)
async function facts(page) {
	return page.evaluate(() => {
		const sheets = [...document.styleSheets].map((sh) => {
			let rules = -1;
			try {
				rules = sh.cssRules.length;
			} catch {
				rules = -1;
			}
			return { href: sh.href, rules };
		});
		// the stylesheet applies: the body's computed style changes when
		// /static/style.css is switched off
		const props = ['color', 'backgroundColor', 'fontFamily', 'fontSize', 'lineHeight', 'marginTop', 'maxWidth'];
		const snap = () => {
			const cs = getComputedStyle(document.body);
			return Object.fromEntries(props.map((p) => [p, cs[p]]));
		};
		const own = [...document.styleSheets].find((sh) => sh.href && new URL(sh.href).pathname === '/static/style.css');
		const styled = snap();
		let unstyled = null;
		if (own) {
			own.disabled = true;
			unstyled = snap();
			own.disabled = false;
		}
		const handlers = [...document.querySelectorAll('*')].filter((e) =>
			[...e.attributes].some((a) => a.name.toLowerCase().startsWith('on')),
		).length;
		return {
			sheets,
			styled,
			unstyled,
			scripts: document.querySelectorAll('script').length,
			dangerous: document.querySelectorAll(
				'script, img, svg, iframe, style, math, object, embed, frame, a[href^="javascript" i]',
			).length,
			handlers,
			inlineStyles: document.querySelectorAll('[style]').length,
			doctype: document.doctype ? document.doctype.name : null,
			lang: document.documentElement.lang,
			h1: document.querySelector('main#main h1') ? document.querySelector('main#main h1').textContent : null,
			whoami: document.querySelector('header #whoami') ? document.querySelector('header #whoami').textContent.trim() : null,
			nav: [...document.querySelectorAll('header nav a')].map((a) => a.getAttribute('href')),
			error: document.querySelector('p#error.error') ? document.querySelector('p#error.error').textContent.trim() : null,
			cookie: document.cookie,
		};
	});
}

// checkPage S NAME STATUS WANT CSP-BEFORE: one line for the page's frame
// (status, doctype, lang, main h1, stylesheet loaded and applied, no CSP
// violation, no script, no inline style or event attribute), one for its
// screenshot
async function checkPage(s, name, status, want, cspBefore) {
	const f = await facts(s.page);
	const probs = [];
	if (status !== want) probs.push(`HTTP ${status}, not ${want}${f.error ? `: ${f.error}` : ''}`);
	if (f.doctype !== 'html') probs.push(`doctype ${f.doctype}`);
	if (f.lang !== 'en') probs.push(`lang ${J(f.lang)}`);
	if (f.h1 === null) probs.push('no main#main h1');
	const sheet = f.sheets.find((x) => x.href && new URL(x.href).pathname === '/static/style.css');
	if (!sheet) probs.push(`stylesheet /static/style.css not in document.styleSheets (${J(f.sheets)})`);
	else if (!(sheet.rules > 0)) probs.push(`stylesheet has no rules (${sheet.rules})`);
	else if (f.unstyled && JSON.stringify(f.styled) === JSON.stringify(f.unstyled))
		probs.push(`the body's computed style is the same without the stylesheet ${J(f.styled)}`);
	const csp = s.log.csp.slice(cspBefore);
	if (csp.length) probs.push(`CSP violations: ${J(csp)}`);
	if (f.scripts) probs.push(`${f.scripts} script elements`);
	if (f.handlers) probs.push(`${f.handlers} elements with event attributes`);
	if (f.inlineStyles) probs.push(`${f.inlineStyles} inline style attributes`);
	check(
		`${s.label} ${name}: HTTP ${want}, stylesheet loaded and applied, no CSP violation, no script`,
		probs.length === 0,
		probs.join('; '),
	);
	await shoot(s, name);
	return f;
}

async function shoot(s, name) {
	shotN++;
	const file = join(ART, `${String(shotN).padStart(2, '0')}-${s.label}-${name}.png`);
	await step(`screenshot ${s.label} ${name}`, async () => {
		await s.page.screenshot({ path: file, fullPage: true });
		const size = statSync(file).size;
		check(`screenshot ${s.label} ${name} (${file.slice(ART.length + 1)}, ${size} bytes)`, size > 1000, `only ${size} bytes`);
	});
}

// visit S NAME PATH [WANT]: open PATH (following redirects), check the page
async function visit(s, name, path, want = 200) {
	const before = s.log.csp.length;
	const resp = await s.page.goto(path, { waitUntil: 'load' });
	return checkPage(s, name, resp ? resp.status() : 0, want, before);
}

// submit S TRIGGER URL-PREDICATE: TRIGGER is the selector of a button to
// click (or a function doing the submission); wait for the page it leads
// to; returns the final response's status
async function submit(s, trigger, urlPred) {
	const before = s.log.csp.length;
	const [resp] = await Promise.all([
		s.page.waitForNavigation({ url: urlPred, waitUntil: 'load' }),
		typeof trigger === 'function' ? trigger() : s.page.locator(trigger).click(),
	]);
	s.cspBefore = before;
	return resp ? resp.status() : 0;
}

const text = async (page, sel) => ((await page.locator(sel).first().textContent()) ?? '').trim();
const count = (page, sel) => page.locator(sel).count();

async function signIn(s, role) {
	await visit(s, 'login', '/admin/login');
	await s.page.locator('form#signin input#token[type="password"][name="token"]').fill(TOKENS[role]);
	const st = await submit(s, 'form#signin button[type="submit"]', (u) => u.pathname === '/admin/');
	const f = await checkPage(s, 'overview', st, 200, s.cspBefore);
	is(`${role} signs in through the form: #whoami`, role, f.whoami);
	is(`${role}: #role`, role, await text(s.page, '#role'));
	const cookies = await s.context.cookies();
	const c = cookies.find((x) => x.name === 'olivares_session');
	is(
		`${role}: the session cookie (64 hex, HttpOnly, SameSite Strict, Path /admin/, not Secure over http, expiring)`,
		{ hex: true, httpOnly: true, sameSite: 'Strict', path: '/admin/', secure: false, expires: true },
		c
			? {
					hex: /^[0-9a-f]{64}$/.test(c.value),
					httpOnly: c.httpOnly,
					sameSite: c.sameSite,
					path: c.path,
					secure: c.secure,
					expires: c.expires > Date.now() / 1000,
				}
			: null,
	);
	check(`${role}: the page's script cannot read the cookie (document.cookie)`, !f.cookie.includes('olivares_session'), f.cookie);
	return f;
}

async function signOut(s) {
	const st = await submit(s, 'form#signout button', (u) => u.pathname === '/admin/login');
	is(`${s.label}: sign-out through the form lands on /admin/login`, 200, st);
	const cookies = await s.context.cookies();
	check(`${s.label}: sign-out removed the cookie`, !cookies.some((c) => c.name === 'olivares_session' && c.value), J(cookies));
	const resp = await s.page.goto('/admin/runs');
	is(`${s.label}: after sign-out /admin/runs leads to the login page`, '/admin/login', new URL(s.page.url()).pathname);
	check(`${s.label}: the login form is shown`, (await count(s.page, 'form#signin')) === 1 && resp.status() === 200, `HTTP ${resp.status()}`);
}

async function main() {
	// ---- editor ----------------------------------------------------------------------
	const ed = await session('editor');
	await step('editor: the login page', async () => {
		await visit(ed, 'login', '/admin/login');
		is('login: form#signin posts to /admin/login', ['post', '/admin/login'], [
			(await ed.page.getAttribute('form#signin', 'method')).toLowerCase(),
			await ed.page.getAttribute('form#signin', 'action'),
		]);
		is('login: the Sign in button', 'Sign in', await text(ed.page, 'form#signin button[type="submit"]'));
		await ed.page.locator('#token').fill(`olv_${'0'.repeat(64)}`);
		const st = await submit(ed, 'form#signin button[type="submit"]', (u) => u.pathname === '/admin/login');
		const f = await checkPage(ed, 'login-invalid-token', st, 401, ed.cspBefore);
		is('login with an unknown token: #error', 'invalid token', f.error);
		is('login with an unknown token: the form again, no cookie', [1, []], [
			await count(ed.page, 'form#signin'),
			(await ed.context.cookies()).filter((c) => c.name === 'olivares_session'),
		]);
	});
	await step('editor: sign in', () => signIn(ed, 'editor'));
	await step('editor: nav', async () => {
		const f = await facts(ed.page);
		is('editor: nav links (no audit)', ['/admin/', '/admin/scenarios', '/admin/runs', '/admin/comparisons', '/admin/replays'], f.nav);
		is('editor: no module form', 0, await count(ed.page, 'form#module-form'));
		is('editor: #module-status', 'enabled', await text(ed.page, '#module-status'));
	});

	await step("the walkthrough's run page", async () => {
		await visit(ed, 'run-walkthrough', `/admin/runs/${WALK_RID}`);
		const p = ed.page;
		is('walkthrough run: step 1 reads "first synthetic account"', 'first synthetic account',
			await p.locator('#outputs tr.output[data-seq="1"] td.output pre').textContent());
		is('walkthrough run: step 2 carries the mock-miss marker', 'mock miss',
			await text(p, '#outputs tr.output.mock-miss[data-seq="2"] td.step-status .mock-miss-marker'));
		check('walkthrough run: the marker is visible', await p.locator('.mock-miss-marker').first().isVisible(), 'hidden');
		check('walkthrough run: the heading names the scenario', /^Run of \S/.test(await text(p, 'main#main h1')), await text(p, 'main#main h1'));
		is('walkthrough run: one marked step only', [1, 1], [await count(p, '.mock-miss-marker'), await count(p, 'tr.output.mock-miss')]);
		is('walkthrough run: step 2 output', '[[mock-miss:agent:user2@example.test]]',
			await p.locator('#outputs tr.output[data-seq="2"] td.output pre').textContent());
		is('walkthrough run: status, isolated, destroyed, counters, score', ['completed', 'true', 'true', '1/2 ok, 1 error', 'executed, not scored (no suite named)'], [
			await text(p, '#run-status'), await text(p, '#run-isolated'), await text(p, '#run-destroyed'),
			await text(p, '#run-counters'), await text(p, '#run-score'),
		]);
	});

	await step('a run from the run form', async () => {
		await visit(ed, 'scenario-walkthrough', `/admin/scenarios/${WALK_SID}`);
		const p = ed.page;
		is('scenario page (editor): run form, no compare form', [1, 0], [await count(p, 'form#run-form'), await count(p, 'form#compare-form')]);
		await p.locator('form#run-form input[name="variant"]').fill('candidate');
		await p.locator('form#run-form select[name="backend"]').selectOption('');
		const st = await submit(ed, 'form#run-form button[type="submit"]', (u) => /^\/admin\/runs\/[0-9a-f]{32}$/.test(u.pathname));
		await checkPage(ed, 'run-from-form', st, 200, ed.cspBefore);
		const rid = new URL(p.url()).pathname.split('/').pop();
		check('the run form lands on the new run', ID.test(rid) && rid !== WALK_RID, rid);
		is('the new run: completed, variant candidate, the mock response, the marker', ['completed', 'candidate', 'first synthetic account', 1], [
			await text(p, '#run-status'), await text(p, '#run-variant'),
			await p.locator('#outputs tr.output[data-seq="1"] td.output pre').textContent(), await count(p, '.mock-miss-marker'),
		]);
		const r = await api('viewer', `/v1/m/sandbox/runs/${rid}`);
		is('the API knows the new run', [200, WALK_SID, 'candidate', 'completed'], [r.status, r.body && r.body.scenario_id, r.body && r.body.variant, r.body && r.body.status]);
	});

	await step('a refused run form keeps what was typed', async () => {
		await visit(ed, 'scenario-walkthrough-again', `/admin/scenarios/${WALK_SID}`);
		const p = ed.page;
		const long = 'v'.repeat(65); // one byte over the API's limit: a 422
		await p.locator('form#run-form input[name="variant"]').fill(long);
		await p.locator('form#run-form select[name="backend"]').selectOption('inproc-mock');
		const newest = async () => ((await api('viewer', `/v1/m/sandbox/runs?scenario=${WALK_SID}&limit=1`)).body || {}).runs?.[0]?.id;
		const newestBefore = await newest();
		const st = await submit(ed, 'form#run-form button[type="submit"]', (u) => u.pathname === `/admin/scenarios/${WALK_SID}/runs`);
		await checkPage(ed, 'run-form-refused', st, 422, ed.cspBefore);
		is('refused run form: the error inside the form, the variant and backend as typed', [1, long, 'inproc-mock'], [
			await count(p, 'form#run-form p#error.error'),
			await p.locator('form#run-form input[name="variant"]').inputValue(),
			await p.locator('form#run-form select[name="backend"]').inputValue(),
		]);
		is('refused run form: the variant field has the focus', 'variant',
			await p.evaluate(() => document.activeElement && document.activeElement.getAttribute('name')));
		const where = await p.evaluate(() => {
			const r = document.querySelector('form#run-form p#error').getBoundingClientRect();
			return { top: Math.round(r.top), bottom: Math.round(r.bottom), height: window.innerHeight };
		});
		check('refused run form: the error is on screen without scrolling', where.top >= 0 && where.bottom <= where.height, J(where));
		const newestAfter = await newest();
		check('refused run form: no run made (the newest run is the same)', newestBefore && newestAfter === newestBefore, `${newestBefore} -> ${newestAfter}`);
		// mended and sent again from the same page (its CSRF field included)
		await p.locator('form#run-form input[name="variant"]').fill('candidate');
		const st2 = await submit(ed, 'form#run-form button[type="submit"]', (u) => /^\/admin\/runs\/[0-9a-f]{32}$/.test(u.pathname));
		await checkPage(ed, 'run-from-mended-form', st2, 200, ed.cspBefore);
		is('the mended form makes its run: variant candidate, backend inproc-mock, completed', ['candidate', 'inproc-mock', 'completed'],
			[await text(p, '#run-variant'), await text(p, '#run-backend'), await text(p, '#run-status')]);
	});

	await step('lists', async () => {
		await visit(ed, 'scenarios', '/admin/scenarios');
		check('scenarios list: rows', (await count(ed.page, '#scenarios tr.scenario')) > 0, 'no row');
		await visit(ed, 'runs', '/admin/runs');
		check('runs list: rows', (await count(ed.page, '#runs tr.run')) > 0, 'no row');
		// the filter form
		// the scenario filter lists the scenarios by name
		check('runs filter: the walkthrough by name', (await ed.page.locator(`form#filter select[name="scenario"] option[value="${WALK_SID}"]`).textContent()).trim() !== WALK_SID, 'shown as its id');
		await ed.page.locator('form#filter select[name="scenario"]').selectOption(WALK_SID);
		await ed.page.locator('form#filter select[name="status"]').selectOption('completed');
		// its submit button
		const go = () => ed.page.locator('form#filter button, form#filter input[type="submit"]').first().click();
		const st = await submit(ed, go, (u) => u.pathname === '/admin/runs' && u.searchParams.get('scenario') === WALK_SID);
		await checkPage(ed, 'runs-filtered', st, 200, ed.cspBefore);
		const statuses = await ed.page.locator('#runs tr.run td.status').allTextContents();
		check('runs filtered by scenario and status: completed rows only, the walkthrough run among them',
			statuses.length > 0 && statuses.every((x) => x.trim() === 'completed') && (await count(ed.page, `#runs tr.run[data-id="${WALK_RID}"]`)) === 1,
			J(statuses));
		is('runs list: the walkthrough row cells', ['isolated: true · destroyed: true', '1/2 ok, 1 error', 'executed, not scored'], [
			await text(ed.page, `#runs tr.run[data-id="${WALK_RID}"] td.attestation`),
			await text(ed.page, `#runs tr.run[data-id="${WALK_RID}"] td.counters`),
			await text(ed.page, `#runs tr.run[data-id="${WALK_RID}"] td.score`),
		]);
		await visit(ed, 'comparisons', '/admin/comparisons');
		await visit(ed, 'replays', '/admin/replays');
		if (REPLAY_RID) {
			check('replays list: the replay', (await count(ed.page, `#replays tr.replay[data-id="${REPLAY_RID}"]`)) === 1, 'missing');
			await visit(ed, 'run-replay', `/admin/runs/${REPLAY_RID}`);
			is('replay run page: kind, session', ['replay', 1], [await text(ed.page, '#run-kind'), await count(ed.page, '#run-session')]);
		}
		await visit(ed, 'audit-forbidden', '/admin/audit', 403);
		await visit(ed, 'not-found', '/admin/no-such-page', 404);
	});

	await step('payloads render as text', async () => {
		const p = ed.page;
		const d0 = ed.log.dialogs.length;
		let f = await visit(ed, 'scenario-payloads', `/admin/scenarios/${XSS_SID}`);
		await p.waitForTimeout(500);
		is('payload scenario page: no script/img/svg/iframe/style/math element, no event attribute', [0, 0], [f.dangerous, f.handlers]);
		is('payload scenario page: the name is text', XSS_NAME, await text(p, '#scenario-name'));
		is('payload scenario page: every step input is its payload, as text', PAYLOADS,
			await p.locator('#steps tr.step td.input pre').allTextContents());
		is('payload scenario page: every mock resource and response, as text',
			{
				resource: [...PAYLOADS.slice(0, -1), PAYLOADS[0]],
				response: [...PAYLOADS.slice(1), PAYLOADS[1]],
				variant: [...PAYLOADS.slice(1).map(() => ''), XSS_VARIANT],
			},
			{
				resource: (await p.locator('#mocks tr.mock td.resource').allTextContents()).map((x) => x.trim()),
				response: await p.locator('#mocks tr.mock td.response pre').allTextContents(),
				variant: (await p.locator('#mocks tr.mock td.variant').allTextContents()).map((x) => x.trim().replace(/^[—-]$/, '')),
			});
		f = await visit(ed, 'run-payloads', `/admin/runs/${XSS_RID}`);
		await p.waitForTimeout(500);
		is('payload run page: no script/img/svg/iframe/style/math element, no event attribute', [0, 0], [f.dangerous, f.handlers]);
		is('payload run page: the variant is text', XSS_VARIANT, await text(p, '#run-variant'));
		is('payload run page: every input is its payload, as text', PAYLOADS,
			await p.locator('#outputs tr.output td.input pre').allTextContents());
		is('payload run page: step 1 output (the variant mock) is text', PAYLOADS[1],
			await p.locator('#outputs tr.output[data-seq="1"] td.output pre').textContent());
		f = await visit(ed, 'runs-payloads', `/admin/runs?scenario=${XSS_SID}`);
		is('payload runs list: no dangerous element', 0, f.dangerous);
		is('no dialog opened (alert, confirm, prompt)', [], ed.log.dialogs.slice(d0));
	});

	await step('editor: sign out', () => signOut(ed));

	// ---- admin -----------------------------------------------------------------------
	const ad = await session('admin');
	await step('admin: sign in', () => signIn(ad, 'admin'));
	await step('admin: overview and audit', async () => {
		const f = await facts(ad.page);
		is('admin: nav links with audit', ['/admin/', '/admin/scenarios', '/admin/runs', '/admin/comparisons', '/admin/replays', '/admin/audit'], f.nav);
		is('admin: the module form turns it off', ['enabled', '0', 'Turn off'], [
			await text(ad.page, '#module-status'),
			await ad.page.getAttribute('form#module-form input[name="enabled"]', 'value'),
			await text(ad.page, 'form#module-form button'),
		]);
		await visit(ad, 'audit', '/admin/audit');
		const actions = (await ad.page.locator('#audit tr.event td.action').allTextContents()).map((x) => x.trim());
		check('audit: the sign-ins are there', actions.includes('admin.signin'), J(actions.slice(0, 10)));
	});
	if (CMP_SID) {
		await step('a comparison from the compare form', async () => {
			await visit(ad, 'scenario-compare', `/admin/scenarios/${CMP_SID}`);
			const p = ad.page;
			is('scenario page (admin): run form and compare form', [1, 1], [await count(p, 'form#run-form'), await count(p, 'form#compare-form')]);
			await p.locator('form#compare-form input[name="baseline"]').fill(CMP_BASELINE);
			await p.locator('form#compare-form input[name="candidate"]').fill(CMP_CANDIDATE);
			await p.locator('form#compare-form input[name="suite"]').fill(CMP_SUITE);
			const st = await submit(ad, 'form#compare-form button[type="submit"]', (u) => /^\/admin\/comparisons\/[0-9a-f]{32}$/.test(u.pathname));
			await checkPage(ad, 'comparison-from-form', st, 200, ad.cspBefore);
			is('the comparison page: #verdict improved, #delta +0.2500', ['improved', '+0.2500'], [await text(p, '#verdict'), await text(p, '#delta')]);
			is('the comparison page: step 2 differs, side by side', [1, '[[mock-miss:agent:user2@example.test]]', 'second synthetic account'], [
				await count(p, '#side-by-side tr.step.differs'),
				await p.locator('#side-by-side tr.step.differs[data-seq="2"] td.baseline pre').textContent(),
				await p.locator('#side-by-side tr.step.differs[data-seq="2"] td.candidate pre').textContent(),
			]);
			const cid = new URL(p.url()).pathname.split('/').pop();
			const r = await api('viewer', `/v1/m/sandbox/comparisons/${cid}`);
			is('the API knows the comparison', [200, 'improved', CMP_SID], [r.status, r.body && r.body.verdict, r.body && r.body.scenario_id]);
			await visit(ad, 'comparisons', '/admin/comparisons');
			is('comparisons list: newest first, the new one on top', cid, await p.locator('#comparisons tr.comparison').first().getAttribute('data-id'));
		});
	} else {
		console.log('# no scorer on this stack: the comparison form is not exercised');
	}
	await step('module off and on from the overview', async () => {
		try {
			await ad.page.goto('/admin/');
			let st = await submit(ad, 'form#module-form button', (u) => u.pathname === '/admin/');
			await checkPage(ad, 'overview-module-off', st, 200, ad.cspBefore);
			is('turned off: #module-status, the form turns it on', ['disabled', '1', 'Turn on'], [
				await text(ad.page, '#module-status'),
				await ad.page.getAttribute('form#module-form input[name="enabled"]', 'value'),
				await text(ad.page, 'form#module-form button'),
			]);
			const f = await visit(ad, 'scenarios-module-off', '/admin/scenarios', 404);
			check('module off: #error says disabled', /disabled/.test(f.error || ''), f.error);
			await ad.page.goto('/admin/');
			st = await submit(ad, 'form#module-form button', (u) => u.pathname === '/admin/');
			is('turned on again', [200, 'enabled'], [st, await text(ad.page, '#module-status')]);
		} finally {
			await setModule(true);
		}
	});
	await step('admin: sign out', () => signOut(ad));

	// ---- viewer ----------------------------------------------------------------------
	const vw = await session('viewer');
	await step('viewer: sign in', () => signIn(vw, 'viewer'));
	await step('viewer: no form it may not submit', async () => {
		for (const [name, path] of [
			['overview', '/admin/'],
			['scenario', `/admin/scenarios/${WALK_SID}`],
			['runs', '/admin/runs'],
			['run', `/admin/runs/${WALK_RID}`],
		]) {
			const resp = await vw.page.goto(path);
			const ids = await vw.page.locator('form').evaluateAll((fs) => fs.map((x) => x.id));
			check(`viewer ${name}: HTTP 200, forms are only filter and sign-out`,
				resp.status() === 200 && (await count(vw.page, 'main#main')) === 1 && ids.every((i) => i === 'filter' || i === 'signout'),
				`HTTP ${resp.status()}, forms ${J(ids)}`);
		}
		await visit(vw, 'scenario', `/admin/scenarios/${WALK_SID}`);
	});

	for (const s of [ed, ad, vw]) {
		is(`${s.label}: no dialog in the whole session`, [], s.log.dialogs);
		is(`${s.label}: no CSP violation in the whole session`, [], s.log.csp);
		if (s.log.errors.length) console.log(`# ${s.label} console errors (not failures): ${J(s.log.errors.slice(0, 5))}`);
		if (s.log.failed.length) console.log(`# ${s.label} failed requests: ${J(s.log.failed.slice(0, 5))}`);
		await s.context.close();
	}
}

try {
	await main();
} catch (e) {
	notOk('browser tests ran to the end', e && e.stack ? e.stack.split('\n').slice(0, 3).join(' ') : String(e));
} finally {
	await browser.close().catch(() => {});
}
console.log(`# ${failures} failure(s); screenshots: ${shotN} in ${ART}`);
process.exitCode = failures ? 1 : 0;
