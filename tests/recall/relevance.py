"""Recall's relevance set, and the harness that measures recall on it.

Eighteen groups of past tasks over six projects: each group is three tasks that say the same
piece of work in different words, and two held-out queries, in other words again, that should
find them. Around them, 228 unrelated tasks in the same projects and the same vocabulary (the
same components, often the same words, another piece of work). Eight off-topic queries should
load nothing in any scope.

Only the texts are hand-written. The tasks' epistemic states are drawn at random (seeded), as
are their ages and learning magnitudes: nothing but the text says what is relevant, so any
weight on the other terms can only be measured against the text, not reward itself. With
``correlated=True`` the tasks of a group start from a shared state (plus noise) and each query's
current state is drawn near it: the favourable case for the state term, to see whether it helps
even then.

Used by ``tests/recall/test_relevance.py`` (floors on quality, off-topic loads nothing) and
``bench/recall_quality.py`` (the figures, the embedder choice, the weights).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from noetic.embeddings import Embedder
from noetic.recall.index import embed_pending
from noetic.recall.scoring import RecallConfig
from noetic.recall.selection import recall
from noetic.store import Store
from noetic.store.summaries import RecallSummary, save_summary
from noetic.vectors import VECTOR_NAMES

NOW = datetime(2026, 11, 23, tzinfo=UTC)

# (project, three past tasks, two held-out queries)
GROUPS: list[tuple[str, tuple[str, str, str], tuple[str, str]]] = [
    ("shop", ("resolve login failures for SSO users",
              "users signing in through Okta get bounced back to the sign-in page",
              "single sign-on redirect loop after the identity provider upgrade"),
     ("fix the authentication bug that stops enterprise customers from logging in",
      "corporate accounts can't get past the SAML login")),
    ("shop", ("promo codes are applied twice at checkout",
              "the coupon discount gets counted double in the basket total",
              "fix duplicated voucher reduction on the order summary"),
     ("the discount shows up two times when paying",
      "checkout subtracts the promotion twice")),
    ("shop", ("product search takes several seconds to return results",
              "speed up the catalogue search endpoint",
              "the item lookup box is sluggish while typing"),
     ("searching for products is very slow",
      "make catalog queries respond faster")),
    ("billing", ("invoices show the wrong date for customers in Asia",
                 "billing dates shift by one day for users east of UTC",
                 "timezone bug puts the invoice issue date on the previous day"),
     ("the invoice date is off by a day for Australian clients",
      "UTC conversion makes statements carry yesterday's date")),
    ("billing", ("Stripe webhooks get processed twice and charge customers again",
                 "deduplicate payment notifications from the provider",
                 "make the payment event handler idempotent"),
     ("customers were billed two times after a webhook retry",
      "repeated callbacks from the payment gateway create duplicate charges")),
    ("billing", ("compute VAT correctly for EU business customers with a tax ID",
                 "reverse charge is not applied to European B2B orders",
                 "handle value-added tax exemption for companies in the EU"),
     ("European companies with a VAT number are still charged tax",
      "apply the intra-community reverse-charge rule")),
    ("mobile", ("the Android app crashes on launch on older phones",
                "startup crash on Android 9 devices",
                "the app closes immediately after opening on legacy Android versions"),
     ("fix the crash when the app starts on old Samsung phones",
      "the application dies at boot on outdated Android releases")),
    ("mobile", ("push notifications stopped arriving on iPhones",
                "APNs alerts are not delivered to iOS users",
                "iOS devices no longer receive remote notifications"),
     ("iPhone users don't get notified anymore",
      "Apple push messages go missing")),
    ("mobile", ("add a dark theme to the settings screen",
                "support night mode across the app",
                "let users switch the interface to dark colours"),
     ("implement dark mode",
      "give the app a black background option for use at night")),
    ("pipeline", ("memory keeps growing in the ingestion worker until it is killed",
                  "investigate the leak in the background import job",
                  "the ETL process runs out of RAM after a few hours"),
     ("the loader's memory usage climbs until the OOM killer stops it",
      "find why the batch job leaks memory")),
    ("pipeline", ("CSV imports break on files with accented characters",
                  "handle non-UTF-8 encodings in uploaded spreadsheets",
                  "Latin-1 files produce garbled names after import"),
     ("umlauts turn into question marks when we ingest CSV data",
      "fix character encoding errors in the file importer")),
    ("pipeline", ("backfill the missing events for the outage in March",
                  "reprocess the days of data lost while the collector was down",
                  "replay dropped analytics events from the archive"),
     ("recover the gap in the event table from last week's downtime",
      "rerun ingestion for the dates we missed")),
    ("infra", ("the end-to-end tests fail randomly on CI",
               "flaky integration test in the build pipeline",
               "intermittent test failures block merges"),
     ("tests pass locally but sometimes fail on the build server",
      "stabilise the nondeterministic suite in continuous integration")),
    ("infra", ("the TLS certificate for the API expired and clients got errors",
               "automate renewal of HTTPS certificates",
               "set up Let's Encrypt auto-renew for the load balancer"),
     ("browsers warn that our site's certificate is out of date",
      "make sure SSL certs renew themselves before they lapse")),
    ("infra", ("nightly Postgres backups are not restorable",
               "test restoring the database from the snapshot",
               "the dump file from the backup job is corrupt"),
     ("verify that we can actually recover the DB from backups",
      "the restore drill failed with a truncated archive")),
    ("docs", ("write the release notes for version 2.0",
              "draft the changelog for the new major version",
              "summarise what changed in the 2.0 release for users"),
     ("prepare the list of changes shipping in the next release",
      "document what's new in this version")),
    ("docs", ("translate the onboarding emails to German",
              "localise the welcome messages into German",
              "German version of the getting-started guide"),
     ("make the signup emails available in German",
      "provide Deutsch translations of the new-user tutorial")),
    ("docs", ("fix dead links in the API reference",
              "many pages of the docs point to URLs that return 404",
              "add a link checker to the documentation build"),
     ("readers keep hitting not-found pages from the manual",
      "find and repair broken hyperlinks in the docs")),
]  # fmt: skip

# Unrelated work in the same projects, often with the groups' words.
DISTRACTORS: dict[str, list[str]] = {
    "shop": [
        "add a sign-up form with email verification",
        "redesign the login page layout for mobile",
        "show the SSO button only on the enterprise plan page",
        "log every admin sign-in to the audit table",
        "add a wishlist to customer accounts",
        "show recently viewed products on the home page",
        "add gift wrapping as a checkout option",
        "display shipping costs before the payment step",
        "support Apple Pay at checkout",
        "add product reviews with star ratings",
        "resize product images to WebP on upload",
        "add a size guide to clothing pages",
        "send an email when an item is back in stock",
        "let customers save several delivery addresses",
        "add breadcrumbs to category pages",
        "rename the basket to cart in the UI copy",
        "export orders to the warehouse system every hour",
        "add a cookie consent banner",
        "A/B test two layouts of the product page",
        "add filters for colour and size to category listings",
        "create a landing page for the summer sale",
        "track add-to-cart events in analytics",
        "limit quantity per order for discounted items",
        "show estimated delivery dates on the product page",
        "add a newsletter signup box to the footer",
        "migrate the storefront to the new CSS framework",
        "support gift cards as a payment method",
        "add a returns portal for customers",
        "show stock levels for each store location",
        "add structured data for products to improve SEO",
        "localise prices into the customer's currency",
        "paginate the order history page",
        "add a chat widget for customer support",
        "compress the JavaScript bundle of the storefront",
        "add an admin screen to create promo campaigns",
        "show related products under the item description",
        "add a password strength meter to the registration form",
        "lazy-load images below the fold on category pages",
    ],
    "billing": [
        "generate monthly usage reports for account managers",
        "add PDF export of invoices",
        "support annual subscription plans with a discount",
        "send a reminder email before a card expires",
        "add proration when customers change plans mid-cycle",
        "record refunds in the ledger",
        "show the invoice history in the customer portal",
        "support paying invoices by bank transfer",
        "add a credit balance to customer accounts",
        "migrate the subscriptions table to the new schema",
        "expose an API endpoint to list invoices",
        "add dunning emails for failed payments",
        "let finance download transactions as CSV",
        "add the company address to invoice headers",
        "round currency amounts consistently to cents",
        "support multiple currencies per account",
        "archive invoices older than seven years",
        "add usage-based pricing for API calls",
        "notify sales when a trial converts to paid",
        "show a preview of the next invoice",
        "add purchase order numbers to invoices",
        "reconcile payouts from the payment provider with the bank statement",
        "add a free trial period to new plans",
        "build a dashboard of monthly recurring revenue",
        "add coupon support to subscription plans",
        "send receipts after each successful charge",
        "cancel subscriptions at the end of the billing period",
        "store customer tax IDs in the account settings",
        "add an audit log for changes to pricing",
        "speed up the invoice listing query",
        "let customers update their card from the portal",
        "support SEPA direct debit",
        "split invoices per cost centre for large customers",
        "add an endpoint to pause a subscription",
        "email the accountant a monthly revenue summary",
        "migrate payment processing to the provider's new API version",
        "add a billing contact separate from the account owner",
        "generate credit notes for partial refunds",
    ],
    "mobile": [
        "add biometric login with Face ID",
        "cache the home feed for offline reading",
        "add a share button to articles",
        "reduce the app's download size",
        "support tablets in landscape orientation",
        "add in-app purchases for premium features",
        "show an onboarding carousel on first launch",
        "add deep links from emails into the app",
        "upgrade the React Native version",
        "add pull-to-refresh to the inbox",
        "add haptic feedback to buttons",
        "localise the app into Spanish",
        "add an app rating prompt after five sessions",
        "support larger accessibility font sizes",
        "add a widget for the iOS home screen",
        "record screen views in the analytics SDK",
        "add a photo picker for profile pictures",
        "let users mute notifications for a chat",
        "add a QR code scanner for tickets",
        "improve battery usage of location tracking",
        "add a settings toggle for autoplay videos",
        "sync favourites between devices",
        "add voice search to the app",
        "show a badge count on the app icon",
        "upload logs from the device when users report a problem",
        "support Android's back gesture in all screens",
        "add a map view of nearby stores",
        "prefetch images on wifi only",
        "add a tutorial for the new editor",
        "make the app work with VoiceOver",
        "add an option to clear the cache",
        "show a banner when the device is offline",
        "add calendar export for events",
        "add swipe actions to list items",
        "publish the beta through TestFlight",
        "add sign in with Apple",
        "compress photos before uploading them",
        "add a splash screen with the new logo",
    ],
    "pipeline": [
        "add a new source for the marketing events",
        "partition the events table by day",
        "write the daily aggregates to the warehouse",
        "add data quality checks for null user ids",
        "move the scheduler from cron to Airflow",
        "add a dashboard for pipeline run times",
        "export the cleaned data to Parquet",
        "add schema validation for incoming JSON",
        "deduplicate users across the two CRM sources",
        "add alerting when a job runs longer than an hour",
        "upgrade the Spark cluster",
        "add a dimension table for products",
        "document the meaning of each column in the warehouse",
        "anonymise personal data before loading it",
        "add incremental loading for the orders table",
        "parallelise the transform step",
        "retry failed API extractions with backoff",
        "store raw files in object storage for thirty days",
        "add a lineage graph for the main tables",
        "compute weekly retention cohorts",
        "load exchange rates every morning",
        "add unit tests for the transformation functions",
        "switch the JSON parser to a faster library",
        "join web sessions with orders for attribution",
        "add a sample dataset for local development",
        "compress old partitions",
        "expose pipeline status on an API",
        "add slowly changing dimensions for customers",
        "track late-arriving records in a metric",
        "rename columns to snake case",
        "add a staging environment for the pipeline",
        "read Excel files from the shared drive",
        "filter bot traffic from clickstream data",
        "create a view of active customers per region",
        "migrate the pipeline config to YAML",
        "add a command to rerun one failed task",
        "set up a data catalogue",
        "aggregate sensor readings into hourly buckets",
    ],
    "infra": [
        "move the staging cluster to Kubernetes",
        "add Terraform modules for the new region",
        "set up log shipping to the central store",
        "rotate the database passwords every quarter",
        "add a status page for the public API",
        "configure autoscaling for the web servers",
        "write a runbook for the on-call engineer",
        "cut build times by caching dependencies",
        "add a canary stage to deployments",
        "upgrade the base Docker images",
        "set up alerts for disk usage above 80 percent",
        "move DNS to the new provider",
        "restrict SSH access to the bastion host",
        "add a linter step to the pipeline",
        "set up a VPN for remote staff",
        "tag cloud resources by team for cost reports",
        "create a sandbox account for experiments",
        "add blue-green deployment for the API",
        "reduce the cloud bill for idle instances",
        "set up a read replica for reporting queries",
        "add a secret manager for application keys",
        "monitor latency percentiles of the API",
        "add rate limiting at the gateway",
        "migrate CI from Jenkins to GitHub Actions",
        "set up container image scanning",
        "add preview environments for pull requests",
        "configure a CDN for static assets",
        "upgrade Postgres to the next major version",
        "tune connection pool sizes",
        "add tracing across the services",
        "archive old logs to cold storage",
        "enforce code owners on the main branch",
        "set up a firewall rule for the admin panel",
        "write a disaster recovery plan for the data centre",
        "add health checks to every service",
        "move the cron jobs into the cluster",
        "run the test suite in parallel on CI",
        "add a dependency update bot",
    ],
    "docs": [
        "write a tutorial for the Python SDK",
        "add a search box to the documentation site",
        "document the rate limits of the API",
        "add code samples in JavaScript",
        "restructure the navigation of the developer portal",
        "write a guide to authentication with API keys",
        "add diagrams of the architecture",
        "publish the OpenAPI spec on the docs site",
        "write a migration guide from version 1",
        "add a glossary of terms",
        "document the webhook payloads",
        "add a dark theme to the documentation site",
        "write a FAQ about billing",
        "add copy buttons to code blocks",
        "record a video walkthrough of the dashboard",
        "document the CLI flags",
        "add a page on error codes",
        "write a troubleshooting guide for installation",
        "add versioned docs for each release",
        "write a style guide for contributors",
        "add a feedback widget to each page",
        "document the data retention policy",
        "write a quick start for the mobile SDK",
        "add an examples repository",
        "proofread the security whitepaper",
        "document the SSO setup for administrators",
        "add a page comparing the pricing plans",
        "write a blog post about the new dashboard",
        "add tooltips explaining each chart",
        "document how to run the project locally",
        "add a roadmap page",
        "convert the docs from reStructuredText to Markdown",
        "improve the accessibility of the docs theme",
        "write a postmortem template",
        "add a page about supported browsers",
        "document the event schema for analytics",
        "write an onboarding checklist for new engineers",
        "add an API changelog feed",
    ],
}

OFF_TOPIC = [
    "renew the office lease",
    "book flights for the team offsite",
    "order new chairs for the meeting room",
    "plan the menu for the holiday party",
    "bake a sourdough loaf",
    "choose a venue for the company picnic",
    "hire a plumber to fix the kitchen sink",
    "buy a birthday present for my sister",
]
PROJECTS = sorted(DISTRACTORS)


@dataclass(frozen=True)
class Query:
    text: str
    project: str
    relevant: frozenset[str]  # cascade ids
    current: dict[str, float]


@dataclass
class RelevanceSet:
    store: Store
    queries: list[Query]
    tasks: dict[str, str] = field(default_factory=dict)  # cascade id -> text


def _state(rng: random.Random, centre: dict[str, float] | None, spread: float) -> dict[str, float]:
    if centre is None:
        return {v: round(rng.uniform(0.1, 0.9), 3) for v in VECTOR_NAMES}
    return {v: round(min(1.0, max(0.0, centre[v] + rng.gauss(0, spread))), 3)
            for v in VECTOR_NAMES}  # fmt: skip


def build(store: Store, *, correlated: bool = False, seed: int = 19) -> RelevanceSet:
    """Write the set into ``store`` as finished tasks (not embedded yet) and return the
    queries with their relevant tasks."""
    rng = random.Random(seed)
    store.conn.execute(
        "INSERT INTO sessions (id, ai_id, profile, created_at) "
        "VALUES ('s_rel', 'rel', 'balanced', ?) ON CONFLICT DO NOTHING",
        (NOW.isoformat(),),
    )
    out = RelevanceSet(store, [])
    entries: list[tuple[str, str, dict[str, float] | None]] = []
    centres = []
    for g, (project, past, _) in enumerate(GROUPS):
        centre = _state(rng, None, 0) if correlated else None
        centres.append(centre)
        entries += [(f"g{g:02d}_{i}", project, centre) for i in range(len(past))]
    for project, texts in DISTRACTORS.items():
        entries += [(f"d_{project}_{i:02d}", project, None) for i in range(len(texts))]
    texts = {
        f"g{g:02d}_{i}": t for g, (_, past, _) in enumerate(GROUPS) for i, t in enumerate(past)
    }
    texts |= {f"d_{p}_{i:02d}": t for p, ts in DISTRACTORS.items() for i, t in enumerate(ts)}
    rng.shuffle(entries)  # the order written says nothing either
    for cid, project, centre in entries:
        pre = _state(rng, centre, 0.1)
        post = {v: round(min(1.0, max(0.0, x + rng.uniform(-0.1, 0.35))), 3)
                for v, x in pre.items()}  # fmt: skip
        delta = {v: round(post[v] - pre[v], 6) for v in VECTOR_NAMES}
        ended = NOW - timedelta(days=rng.uniform(0, 90))
        summary = RecallSummary(
            cascade_id=cid, session_id="s_rel", ai_id="rel", project=project, task=texts[cid],
            ended_at=ended.isoformat(), pre=pre, post=post, delta=delta,
            learning=round(rng.uniform(0, 0.35), 3), calibration="well_calibrated",
            confidence_pre=0.5, confidence_post=0.7, notes="",
        )  # fmt: skip
        store.conn.execute(
            "INSERT INTO cascades (id, session_id, task, status, profile, created_at) "
            "VALUES (?, 's_rel', ?, 'completed', 'balanced', ?)",
            (cid, summary.task, summary.ended_at),
        )
        save_summary(store, summary)
        out.tasks[cid] = summary.task
    for g, (project, past, queries) in enumerate(GROUPS):
        relevant = frozenset(f"g{g:02d}_{i}" for i in range(len(past)))
        for text in queries:
            current = _state(rng, centres[g], 0.1) if correlated else _state(rng, None, 0)
            out.queries.append(Query(text, project, relevant, current))
    return out


def embed_all(store: Store, embedder: Embedder) -> None:
    embed_pending(store, embedder)


class Cached:
    """An embedder that remembers its query vectors: a sweep over weights embeds each query
    once."""

    def __init__(self, embedder: Embedder) -> None:
        self.inner = embedder
        self.name = embedder.name
        self.dimension = embedder.dimension
        self._seen: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in texts if t not in self._seen]
        if missing:
            for t, v in zip(missing, self.inner.embed(missing), strict=True):
                self._seen[t] = v
        return np.array([self._seen[t] for t in texts], dtype=np.float32).reshape(
            len(texts), self.dimension
        )


@dataclass(frozen=True)
class Quality:
    p_at_3: float
    r_at_5: float
    mrr: float
    queries: int
    off_topic_loaded: int  # off-topic recalls (every query, every scope) that loaded anything
    off_topic_queries: int
    off_topic_tasks: int  # tasks those recalls loaded
    misses: tuple[str, ...] = ()  # queries whose first relevant task is not in the top 5


def evaluate(
    rel: RelevanceSet,
    embedder: Embedder,
    count_tokens: Callable[[str], int],
    *,
    config: RecallConfig | None = None,
    all_projects: bool = False,
    ranker: Callable[[Query], list[str]] | None = None,
    off_topic: bool = True,
) -> Quality:
    """P@3, R@5 and MRR of what recall loads (top 5, the query's project unless
    ``all_projects``), and how many tasks the off-topic queries load (unless not
    ``off_topic``). ``ranker`` replaces recall's ranking of the held-out queries (a list of
    cascade ids, best first) for comparisons."""

    def top5(text: str, project: str | None, current: dict[str, float] | None) -> list[str]:
        result = recall(
            rel.store, text, embedder, count_tokens, current=current, project=project,
            all_projects=all_projects or project is None, limit=5, config=config, now=NOW,
        )  # fmt: skip
        return [c.cascade_id for c in result.chosen]

    p3 = r5 = rr = 0.0
    misses = []
    for q in rel.queries:
        got = ranker(q)[:5] if ranker else top5(q.text, q.project, q.current)
        p3 += len(set(got[:3]) & q.relevant) / 3
        r5 += len(set(got[:5]) & q.relevant) / len(q.relevant)
        first = next((r for r, c in enumerate(got, 1) if c in q.relevant), None)
        rr += 1 / first if first else 0.0
        if first is None:
            misses.append(q.text)
    loaded = tasks = 0
    scopes: list[str | None] = [None, *PROJECTS] if off_topic else []
    for text in OFF_TOPIC:
        for project in scopes:
            got = top5(text, project, None)
            loaded += bool(got)
            tasks += len(got)
    n = len(rel.queries)
    return Quality(
        round(p3 / n, 3), round(r5 / n, 3), round(rr / n, 3), n, loaded,
        len(OFF_TOPIC) * len(scopes), tasks, tuple(misses),
    )  # fmt: skip
