"""More questions over the hand-written facts (paraphrases, questions that need several
records), and questions nothing recorded answers: plausible ones, near the recorded
topics, that a search must not answer with a confident wrong hit."""

from __future__ import annotations

from benchmarks.retrieval.corpus import Book

UNANSWERABLE = (
    "which kafka topic do invoice events go to?",
    "what did we decide about moving billing to CockroachDB?",
    "why did the graphql gateway crash last week?",
    "what's the terraform state bucket called?",
    "ERR_LEDGER_SNAPSHOT_CORRUPT",
    "which version of elasticsearch are we pinned to?",
    "how did we fix the memory leak in the websocket server?",
    "what did the security audit say about password hashing?",
    "who approved the move to kubernetes 1.30?",
    "what did the user say about dark mode in checkout?",
    "tests/billing/test_tax.py::test_us_sales_tax_nexus",
    "what is the sentry DSN for the mobile app?",
    "why was the android build signing key rotated?",
    "what's the SLA we promised enterprise tenants?",
    "when did we migrate the blog to Hugo?",
    "which GPU instance runs the model training?",
    "how many replicas does the redis cluster have?",
    "what's the rollback plan for the mainframe integration?",
    "ERR_TOKEN_EXPIRED_CLOCK_DRIFT",
    "ledgerly-client 3.0.0 release notes",
    "what did we decide about the rust rewrite of the exporter?",
    "what's Lena's cat called?",
    "what did I say about my brother's new house?",
    "when is Sam's birthday?",
    "what did Jonah study for his PhD?",
    "which gym did I join in February?",
    "what did the dentist say about my wisdom tooth?",
    "how much did the new sofa cost?",
    "what is my blood type?",
    "where did we go skiing in January?",
    "what did I think of the Barbie movie?",
    "when is my car's MOT due?",
    "what did I name my sourdough starter?",
    "which marathon am I training for in October?",
    "what's the wifi password at mum's place?",
    "what did Priya say about the hot tub at the cabin?",
    "who is bringing the guitar to the cabin?",
    "what did Mira think of Klara and the Sun's film adaptation?",
    "how did Biscuit do at puppy training classes?",
    "what did Helen say in my six-month review?",
    "what flight number is the Porto flight?",
    "what was the name of the hotel in Alfama?",
    "did I ever tell you about my allergy to peanuts?",
    "what color did we paint the bedroom?",
    "when did I stop drinking coffee?",
    "what did Tiago's parents give as an engagement present?",
    "what's the name of Jonah's supervisor at McGill?",
    "which vaccine did Biscuit get in May?",
    "what did we decide about switching from Stripe to Adyen?",
    "why did the iOS app get rejected from the App Store?",
    "what's the cron expression for the nightly CI?",
    "how much did the cabin kayak rental cost?",
)


def write(b: Book) -> None:
    """The extra questions."""
    for text in UNANSWERABLE:
        b.ask("unanswerable", text)
    para = (
        (
            "how did we get past the unrecognised field kind when loading the backup?",
            "billing.mediumtext",
        ),
        ("what was the root cause of the intermittent sign-in suite breakage?", "auth.race"),
        ("why was a quick option to ignore dependency clashes avoided?", "checkout.cards_lib"),
        ("which libc drawbacks pushed us to a debian flavour?", "worker.base"),
        (
            "what replaced the old setting for where uploaded documents get saved?",
            "django.storages",
        ),
        ("why don't we keep private credentials around for ages?", "release.sigstore"),
        ("what made the pipeline's network middleman worsen things?", "auth.race"),
        ("when did the engaged couple choose to marry?", "lena2.1"),
        ("what sum did the employer put on the table, including extras?", "job2.1"),
        ("how quick was my earliest under-sixty-minutes race?", "run2.1"),
        ("what promotion did my partner receive at work?", "sam1.1"),
        ("which seafood dish was the highlight of that holiday?", "lisbon2.1"),
        (
            "what does the production rollout look like after two spotless days?",
            "worker.deploy_prod",
        ),
    )
    for question, key in para:
        b.ask("paraphrase", question, key)
    multi = (
        ("who are Dana Whitfield and what do they own or approve?", "auth.c1.4", "release.c1.2"),
        ("what do I need to organise for September?", "lena2.1", "porto1.1", "lena2.3"),
        (
            "what did the user tell me to keep or not drop during the migrations?",
            "billing.scope",
            "django.freeze",
        ),
        (
            "which flags gate rollouts in billing and checkout?",
            "billing.dualwrite",
            "checkout.flag",
        ),
        ("what has Sam been up to this year?", "sam1.1", "lisbon1.1"),
        ("summarise the release pipeline decisions", "release.registry", "release.sigstore"),
        ("what happened with Jonah, from the news to the send-off?", "jonah1.1", "jonah1.3"),
    )
    for question, *keys in multi:
        b.ask("multi-fact", question, *keys)
    when = (
        ("what did I tell you about mum in mid April?", "2026-04-30 10:00", "mom2.1"),
        ("what did I say about the rent last month?", "2026-06-20 10:00", "flat1.1"),
        ("what did Sam and I book at the start of April?", None, "lisbon1.1"),
        ("what happened with the job offer in late March?", None, "job2.1"),
        ("what did we decide about signing tags on 25 June?", None, "release.sigstore"),
        ("what went wrong with the docker build on June 1?", None, "worker.build", "worker.ffi"),
        ("what did I say about Jonah's move back in February?", None, "jonah1.1"),
        (
            "what was decided for the billing migration in the first week of May?",
            None,
            "billing.pgloader",
        ),
    )
    for question, asked, *keys in when:
        b.ask("temporal", question, *keys, asked_at=asked)
    for question, key in (
        ("what's the reference number for the cabin deposit?", "cabin.6"),
        ("which language am I learning and why?", "lang1.1"),
        ("what dog does the vet look after, and where?", "biscuit1.3"),
        ("what did the GP prescribe instead of penicillin?", "allergy.1"),
    ):
        b.ask("single-fact", question, key)


def book(*, size: int = 1) -> Book:
    """The whole labelled set: facts, families, look-alikes and questions."""
    from benchmarks.retrieval import facts_coding, facts_personal, families, filler

    b = Book()
    facts_coding.write(b)
    facts_personal.write(b)
    families.nightly(b)
    families.oncall(b)
    write(b)
    filler.write(b, size=size)
    return b
