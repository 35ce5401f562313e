"""A person's conversations with an assistant over six months, by hand (people, events,
dates, preferences, plans, things said weeks apart), and a group chat where speakers are
named; with the questions an assistant would be asked about them."""

from __future__ import annotations

from benchmarks.retrieval.corpus import Book

U, A = "user", "assistant"


def write(b: Book) -> None:
    """The personal sessions, the group chat and their questions."""
    _people(b)
    _running(b)
    _work(b)
    _home(b)
    _travel(b)
    _group_chat(b)


def _day(b: Book, key: str, at: str, title: str, lines: list[tuple[str, str]]) -> str:
    session = b.session(f"p.{key}", at, title)
    b.chat(key, session, at, lines)
    return session


def _people(b: Book) -> None:
    _day(b, "lena1", "2026-01-08 19:30", "sister", [
        (U, "My sister Lena just got the night-shift charge nurse job at the hospital in Porto!"),
        (A, "That's great news. Do you want ideas for a congratulations gift?"),
        (U, "Maybe. She loves fountain pens, the Lamy Safari ones."),
    ])  # fmt: skip
    _day(b, "lena2", "2026-02-19 20:10", "Lena's wedding", [
        (U, "Lena and Tiago set the wedding date: 19 September, in a quinta outside Porto."),
        (A, "Lovely. Will you need help planning the trip or a speech?"),
        (U, "A speech, later. I'm her maid of honour."),
    ])  # fmt: skip
    _day(b, "mom1", "2026-03-30 18:00", "mum", [
        (U, "Mum's knee replacement is booked for 9 April at St Mary's. I'll stay with her the"
            " week after."),
        (A, "I hope it goes smoothly. Shall I remind you to pack for that week?"),
    ])  # fmt: skip
    _day(b, "mom2", "2026-04-16 21:00", "mum recovering", [
        (U, "Mum is home. The physio said she can climb stairs without the crutches by mid"
            " May if she does the exercises twice a day."),
    ])  # fmt: skip
    _day(b, "jonah1", "2026-02-02 12:30", "Jonah", [
        (U, "Jonah told me he's moving to Montreal in July for a postdoc at McGill."),
        (A, "Big move! Are you planning a send-off?"),
        (U, "Yes, a picnic on 27 June in Victoria Park, bring-your-own-food."),
    ])  # fmt: skip
    _day(b, "biscuit1", "2026-03-12 08:15", "dog", [
        (U, "Biscuit has to go back to the vet on Thursday; the limp in his back leg is back."),
        (A, "Poor Biscuit. Which vet do you use, in case you want me to note it?"),
        (U, "Dr Amara Osei at Greenway Vets."),
    ])  # fmt: skip
    _day(b, "biscuit2", "2026-03-19 17:45", "dog update", [
        (U, "The vet says it's a mild cruciate strain, no surgery: six weeks of short lead walks"
            " and a joint supplement."),
    ])  # fmt: skip
    _day(b, "sam1", "2026-01-25 10:00", "Sam", [
        (U, "Sam got the head of year 9 role at his school, starts after Easter."),
        (A, "Congratulations to him! That's more responsibility and probably more evenings."),
        (U, "Exactly, parents' evenings every second Wednesday."),
    ])  # fmt: skip

    b.ask("single-fact", "what job did Lena get?", "lena1.1")
    b.ask("single-fact", "what kind of pens does Lena like?", "lena1.3")
    b.ask("single-fact", "when is Lena's wedding?", "lena2.1")
    b.ask("single-fact", "what is my role at Lena's wedding?", "lena2.3")
    b.ask("single-fact", "where is Jonah moving and why?", "jonah1.1")
    b.ask("single-fact", "where is Jonah's farewell picnic?", "jonah1.3")
    b.ask("single-fact", "what's the name of Biscuit's vet?", "biscuit1.3")
    b.ask("single-fact", "what did the vet say about Biscuit's leg?", "biscuit2.1")
    b.ask("single-fact", "what new role did Sam get at school?", "sam1.1")
    b.ask("single-fact", "where is mum's knee operation?", "mom1.1")
    b.ask("paraphrase", "who is my brother-in-law to be?", "lena2.1")
    b.ask("paraphrase", "which doctor treats our pet?", "biscuit1.3")
    b.ask("paraphrase", "what present might suit my sibling's hobby of writing tools?", "lena1.3")
    b.ask("paraphrase", "how often does my partner have evening meetings with families?", "sam1.3")
    b.ask("paraphrase", "when should my mother manage steps unaided?", "mom2.1")
    b.ask("paraphrase", "what treatment plan was suggested for the injured hound?", "biscuit2.1")
    b.ask("multi-fact", "what has happened with Biscuit's leg so far?", "biscuit1.1", "biscuit2.1")
    b.ask(
        "multi-fact", "what do I know about Lena's new job and her wedding?", "lena1.1", "lena2.1"
    )
    b.ask(
        "multi-fact",
        "how did mum's knee surgery go and what's the recovery plan?",
        "mom1.1",
        "mom2.1",
    )
    b.ask("temporal", "what did I tell you about my sister in January?", "lena1.1", "lena1.3")
    b.ask(
        "temporal",
        "what happened with the dog last week?",
        "biscuit2.1",
        asked_at="2026-03-24 09:00",
    )
    b.ask(
        "temporal", "what news did I share two days ago?", "jonah1.1", asked_at="2026-02-04 09:00"
    )


def _running(b: Book) -> None:
    _day(b, "run1", "2026-01-20 07:50", "run", [
        (U, "First parkrun of the year: 5k in 31:40. Legs felt heavy."),
        (A, "A solid start. Want a plan to get under 30 minutes?"),
    ])  # fmt: skip
    _day(b, "run2", "2026-03-15 11:20", "10k", [
        (U, "Did the Riverside 10k this morning in 58:12! First time under an hour."),
    ])  # fmt: skip
    _day(b, "run3", "2026-05-31 14:00", "half marathon", [
        (U, "Finished the Northbridge half marathon in 2:11:05. Cramped at mile 11."),
        (A, "Well done! Cramp late in a race is often salt; try an electrolyte tab at mile 6."),
    ])  # fmt: skip
    _day(b, "run4", "2026-06-20 09:00", "running shoes", [
        (U, "My Pegasus 40s have 700 km on them. I want something with more cushioning for"
            " long runs, under 150 pounds."),
        (A, "The Novablast 4 or the Ghost 16 both fit that budget and are well cushioned."),
    ])  # fmt: skip

    b.ask("temporal", "what was my 10k time in March?", "run2.1")
    b.ask("temporal", "what race did I do last weekend?", "run3.1", asked_at="2026-06-03 18:00")
    b.ask("temporal", "how did my first parkrun of the year go?", "run1.1")
    b.ask("temporal", "what did I say about my running shoes ten days ago?", "run4.1")
    b.ask("single-fact", "what was my half marathon time?", "run3.1")
    b.ask("single-fact", "which running shoes did you suggest?", "run4.2")
    b.ask(
        "paraphrase",
        "what caused trouble near the end of that long event, and the advice?",
        "run3.2",
    )
    b.ask("multi-fact", "list all my race results this year", "run1.1", "run2.1", "run3.1")


def _work(b: Book) -> None:
    _day(b, "job1", "2026-03-03 18:40", "interview", [
        (U, "Had the second interview at Fernhill Labs today for the data engineer role."
            " Panel was Helen Cho and two engineers. Went well I think."),
    ])  # fmt: skip
    _day(b, "job2", "2026-03-24 13:00", "offer", [
        (U, "Fernhill made an offer: 72k plus 10% bonus, hybrid three days in the office."),
        (A, "Congratulations! Are you going to negotiate?"),
        (U, "I'll ask for 76k and a fourth remote day."),
    ])  # fmt: skip
    _day(b, "job3", "2026-04-20 19:00", "first day", [
        (U, "First day at Fernhill done. My manager Helen wants a pipeline for the sensor data"
            " by end of June."),
    ])  # fmt: skip
    _day(b, "job4", "2026-06-12 20:30", "work stress", [
        (U, "The sensor pipeline keeps dropping late-arriving readings. Helen moved the"
            " deadline to 15 July, which is a relief."),
    ])  # fmt: skip

    b.ask("single-fact", "what salary did Fernhill offer me?", "job2.1")
    b.ask("single-fact", "what counter-offer was I going to make?", "job2.3")
    b.ask("single-fact", "who is my manager at Fernhill?", "job3.1")
    b.ask("single-fact", "what is the new deadline for the sensor pipeline?", "job4.1")
    b.ask("temporal", "how did the interview in early March go?", "job1.1")
    b.ask(
        "temporal",
        "what did I say about work two weeks ago?",
        "job4.1",
        asked_at="2026-06-26 09:00",
    )
    b.ask("paraphrase", "how much was the yearly pay proposed by the new employer?", "job2.1")
    b.ask("paraphrase", "which people sat across the table questioning me?", "job1.1")
    b.ask(
        "multi-fact",
        "walk me through how the Fernhill hiring went, from interview to starting",
        "job1.1",
        "job2.1",
        "job3.1",
    )


def _home(b: Book) -> None:
    _day(b, "food1", "2026-01-12 19:00", "dinner", [
        (U, "Reminder for future recipes: I'm pescatarian and I can't stand coriander."),
        (A, "Noted: fish is fine, no meat, and no coriander."),
    ])  # fmt: skip
    _day(b, "food2", "2026-02-27 18:30", "dinner party", [
        (U, "Hosting six people Saturday. Thinking a big tray of roasted hake with chorizo-free"
            " butter beans and salsa verde."),
    ])  # fmt: skip
    _day(b, "allergy", "2026-02-10 09:10", "doctor", [
        (U, "The GP confirmed I'm allergic to penicillin; they gave me doxycycline instead."),
    ])  # fmt: skip
    _day(b, "bike1", "2026-04-05 16:00", "saving", [
        (U, "I'm saving for a gravel bike, the Canyon Grizl, about 1,800 euros. Putting away"
            " 250 a month."),
    ])  # fmt: skip
    _day(b, "flat1", "2026-05-18 20:00", "flat", [
        (U, "The landlord is raising the rent from 1,450 to 1,560 in August. I have until 30"
            " June to give notice if we want to leave."),
    ])  # fmt: skip
    _day(b, "lang1", "2026-02-14 21:00", "Portuguese", [
        (U, "Started Portuguese lessons with a tutor, Inês, on Tuesdays at 7pm, so I can"
            " speak with Tiago's family at the wedding."),
    ])  # fmt: skip
    _day(b, "coffee", "2026-01-30 08:00", "coffee", [
        (U, "My usual order is an oat flat white, extra hot."),
    ])  # fmt: skip
    _day(b, "plant", "2026-06-26 18:00", "plants", [
        (U, "The fiddle leaf fig is dropping leaves again; I moved it away from the radiator"
            " to the east window."),
    ])  # fmt: skip

    b.ask("single-fact", "what's my diet?", "food1.1")
    b.ask("single-fact", "which antibiotic am I allergic to?", "allergy.1")
    b.ask("single-fact", "what bike am I saving for?", "bike1.1")
    b.ask("single-fact", "how much is the rent going up?", "flat1.1")
    b.ask("single-fact", "when do I have Portuguese lessons?", "lang1.1")
    b.ask("single-fact", "what's my usual coffee order?", "coffee.1")
    b.ask("single-fact", "what did I cook for the dinner party?", "food2.1")
    b.ask("paraphrase", "which herb should dishes leave out for me?", "food1.1")
    b.ask("paraphrase", "what medicine makes me react badly?", "allergy.1")
    b.ask("paraphrase", "who teaches me the language of my future in-laws?", "lang1.1")
    b.ask(
        "paraphrase",
        "by what date must we tell the property owner whether we're moving?",
        "flat1.1",
    )
    b.ask(
        "paraphrase", "how much do I set aside every four weeks, and for what purchase?", "bike1.1"
    )
    b.ask("paraphrase", "what happened to the houseplant near the heater?", "plant.1")
    b.ask("temporal", "what did I say about my plant a few days ago?", "plant.1")
    b.ask("temporal", "what was I planning to cook in late February?", "food2.1")
    b.ask(
        "multi-fact",
        "what should you keep in mind about my health and food when suggesting meals or medicine?",
        "food1.1",
        "allergy.1",
    )


def _travel(b: Book) -> None:
    _day(b, "lisbon1", "2026-04-02 20:00", "Lisbon", [
        (U, "Sam and I booked Lisbon for 8 to 12 May, flights with TAP from Gatwick, staying"
            " in Alfama."),
        (A, "Lovely. Want a list of things to do in Alfama and Belém?"),
        (U, "Yes, and I prefer an aisle seat, always."),
    ])  # fmt: skip
    _day(b, "lisbon2", "2026-05-13 10:00", "back from Lisbon", [
        (U, "Back from Lisbon. Best meal was grilled sardines at a tasca called O Velho Eurico."
            " The tram 28 queue was two hours, never again."),
    ])  # fmt: skip
    _day(b, "porto1", "2026-06-08 19:00", "wedding travel", [
        (U, "For Lena's wedding I booked flights to Porto on 17 September and back on the 21st."
            " Sam can only come from the 18th."),
    ])  # fmt: skip

    b.ask("single-fact", "when is our Lisbon trip?", "lisbon1.1")
    b.ask("single-fact", "what was the best meal in Lisbon?", "lisbon2.1")
    b.ask("single-fact", "when do I fly to Porto for the wedding?", "porto1.1")
    b.ask("single-fact", "what seat do I prefer on planes?", "lisbon1.3")
    b.ask("temporal", "what did I say about the trip in May?", "lisbon2.1")
    b.ask(
        "temporal",
        "what travel did I book three weeks ago?",
        "porto1.1",
        asked_at="2026-06-29 10:00",
    )
    b.ask("paraphrase", "which famous line did we find too crowded to ride?", "lisbon2.1")
    b.ask(
        "multi-fact",
        "what are my travel plans for Lena's wedding, and when does Sam join?",
        "porto1.1",
        "lena2.1",
    )


def _group_chat(b: Book) -> None:
    s = b.session("p.cabin", "2026-05-20 19:00", "cabin trip group chat")
    lines = [
        (
            "Priya",
            "I found a cabin near Loch Tay for the 10-12 July weekend, sleeps six, 540"
            " pounds total.",
        ),
        ("Jonas", "Looks great. I can pay the 150 deposit tonight if everyone sends me 25."),
        ("Ana", "I'm in but I can only arrive Saturday morning, I work Friday."),
        ("Wei", "I'll drive, my car fits five with luggage. Leaving Glasgow at 5pm Friday."),
        ("Priya", "Ana, I'll pick you up from the Pitlochry train on Saturday then."),
        ("Jonas", "Deposit paid. Reference number CB-77314."),
        ("Ana", "Can we do a vegetarian barbecue? Half of us don't eat meat."),
        ("Wei", "Fine by me. I'll bring the kayak too."),
    ]
    for n, (name, text) in enumerate(lines, 1):
        b.turn(f"cabin.{n}", s, f"2026-05-20 19:{n * 3:02d}", "user", f"{name}: {text}",
               name=name)  # fmt: skip

    b.ask("single-fact", "what did Jonas say about the cabin deposit?", "cabin.2", "cabin.6")
    b.ask("single-fact", "when can Ana get to the cabin?", "cabin.3")
    b.ask("single-fact", "who is driving to the cabin and from where?", "cabin.4")
    b.ask("single-fact", "what did Ana ask about food for the trip?", "cabin.7")
    b.ask("single-fact", "how much does the Loch Tay cabin cost?", "cabin.1")
    b.ask("identifier", "CB-77314", "cabin.6")
    b.ask("paraphrase", "who will collect someone at the railway station?", "cabin.5")
    b.ask("paraphrase", "which boat is somebody taking along?", "cabin.8")
    b.ask(
        "multi-fact",
        "what is everyone bringing or doing for the cabin weekend?",
        "cabin.2",
        "cabin.4",
        "cabin.5",
        "cabin.8",
    )
    b.ask(
        "temporal",
        "what did the group chat decide about the cabin last month?",
        "cabin.1",
        "cabin.6",
        asked_at="2026-06-15 10:00",
    )
