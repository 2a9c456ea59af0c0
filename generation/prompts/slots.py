"""Find the person slot of a prompt and insert an attribute phrase into it.

A *slot* is the first singular person noun of the prompt (``person``, ``doctor``,
``medical student`` ...) followed by something a subject can be followed by (a
verb in -ing, a preposition, the end). Insertion touches only that noun phrase:
adjectives go before it (after any descriptive adjective), postmodifiers right
after it, and the indefinite article in front of it is re-chosen (a/an).
Everything is word-level and rule-based so that a reader can check each rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GENERIC_HEADS = {"person", "individual"}
PERSON_HEADS = GENERIC_HEADS | set(
    """adult architect archer artist astronaut athlete author baker barber barista bartender
    blogger boxer builder butcher caregiver cashier chef chemist citizen cleaner clerk client
    climber coach commuter consultant cook customer cyclist dancer dentist designer detective
    developer diver doctor driver electrician emt engineer entrepreneur farmer fan fencer figure
    firefighter gardener guard guest hacker healer herbalist hiker hunter influencer instructor
    inventor investigator janitor journalist judge lawyer lecturer librarian lifeguard mechanic
    medic musician neighbor neighbour nurse officer painter paramedic participant passenger
    patient pedestrian performer pharmacist photographer physician physicist pilot player
    plumber politician professional professor programmer protester reporter researcher resident
    runner sailor scientist sculptor shopper singer skier soldier sommelier stranger student
    surfer surgeon swimmer tailor teacher technician therapist tourist trainer traveler
    traveller tutor veterinarian visitor volunteer vendor victim worker writer""".split()
)
# Heads that already say gender or age: gender and age values are skipped for them.
MARKED_HEADS = set(
    """man woman boy girl child kid teen teenager toddler baby infant mother father mom dad
    grandmother grandfather grandma grandpa husband wife son daughter brother sister
    businessman businesswoman gentleman lady fisherman policeman policewoman schoolgirl
    schoolboy monk nun priest""".split()
)
# Heads that are person nouns only inside a compound ("fashion model", not "anatomical model").
COMPOUND_ONLY_HEADS = {"model": {"fashion", "runway", "photo", "art", "life"}}
MARKING_ADJECTIVES = {"young", "old", "elderly", "aged", "teenage", "middle-aged", "male", "female"}
# Adjectives that precede an origin adjective ("a lone Korean hiker"); any other
# premodifier is taken as part of the compound noun ("a Korean medical student").
DESCRIPTIVE_ADJECTIVES = MARKING_ADJECTIVES | set(
    """single lone solitary happy sad smiling tired busy focused determined confident proud
    tall short thin slim strong small big famous skilled experienced professional local
    anonymous mysterious worried calm angry nervous lonely""".split()
)
DESCRIPTIVE_SUFFIXES = ("ful", "less", "ous", "ent", "ed")
# Premodifiers that already name a group: an attribute added next to them would be
# confounded with it ("a Sikh individual", "a disabled person").
GROUP_WORDS = set(
    """disabled blind deaf muslim jewish christian hindu sikh buddhist catholic protestant
    black white asian latino latina hispanic gay lesbian queer transgender trans immigrant
    refugee indigenous non-binary nonbinary asexual aromantic bisexual pansexual intersex
    """.split()
)
PLURAL_PERSON_WORDS = {"people", "persons", "crowd", "couple", "family", "group", "team", "crew"}
DETERMINERS = set(
    "a an the this that one his her their its our my your every each another some any".split()
)
PREPOSITIONS = set(
    """in at with on for from by near during inside outside under over behind beside beneath
    among between into onto through across around against along about after before while
    who whose that and or as""".split()
)
FINITE_VERBS = set(
    """is was sits stands walks holds looks wears smiles works poses runs reads writes has
    uses plays""".split()
)
WORD = re.compile(r"\S+")
SPLIT_PUNCT = re.compile(r"^(.*?)([,.;:!?)\"']*)$")


@dataclass(frozen=True)
class Slot:
    """Word indices of the person noun phrase: ``start`` (first premodifier kept
    inside the compound) to ``head`` (the person noun itself)."""

    start: int
    head: int
    head_word: str
    marked: bool  # the noun phrase already says gender or age


@dataclass(frozen=True)
class SlotSearch:
    slot: Slot | None
    reason: str  # "" when a slot was found, else why not
    detail: str = ""


def words_of(text: str) -> list[str]:
    return WORD.findall(text)


def bare(word: str) -> str:
    """Lower-cased word without trailing punctuation ("Doctor," -> "doctor")."""
    return SPLIT_PUNCT.match(word).group(1).lower()


def find_person_slot(text: str, *, from_word: int = 0) -> SlotSearch:
    """The first singular person slot at or after word ``from_word``."""
    words = words_of(text)
    for index, word in enumerate(words):
        if index < from_word:
            continue
        noun = bare(word)
        if noun in PLURAL_PERSON_WORDS or _is_plural_person(noun):
            # The first person mentioned is a group: the scene is about them.
            return SlotSearch(None, "plural_person_only", f"the subject is a group ('{noun}')")
        if not _is_person_head(words, index) or not _can_end_subject(words, index):
            continue
        if index > 0 and word[:1].isupper():
            continue  # a proper noun mid-sentence ("Doctor Who")
        start = _compound_start(words, index)
        if _names_a_group(words, start, index):
            return SlotSearch(None, "slot_names_a_group", f"'{' '.join(words[: index + 1])}'")
        premodifiers = {bare(w) for w in words[start:index]} | _adjectives_before(words, start)
        marked = noun in MARKED_HEADS or bool(premodifiers & MARKING_ADJECTIVES)
        return SlotSearch(Slot(start=start, head=index, head_word=noun, marked=marked), "")
    return SlotSearch(None, "no_person_slot", "no singular person noun to attach a phrase to")


def _names_a_group(words: list[str], start: int, head: int) -> bool:
    first = max(0, start - 3)
    for index in range(first, head):
        word = words[index]
        if bare(word) in GROUP_WORDS or (index > 0 and index >= start and word[:1].isupper()):
            return True
    return False


def _is_person_head(words: list[str], index: int) -> bool:
    noun = bare(words[index])
    if noun in PERSON_HEADS or noun in MARKED_HEADS:
        return True
    return index > 0 and bare(words[index - 1]) in COMPOUND_ONLY_HEADS.get(noun, ())


def _is_plural_person(noun: str) -> bool:
    singular = noun[:-1]
    return noun.endswith("s") and (singular in PERSON_HEADS | MARKED_HEADS) and singular != "figure"


def _can_end_subject(words: list[str], index: int) -> bool:
    """A person noun is a slot only where its noun phrase ends: "fan drawing" yes,
    "fan illustration" no (there "fan" modifies "illustration")."""
    word = words[index]
    if bare(word) != word.lower() or index == len(words) - 1:
        return True  # punctuation or the end closes the noun phrase
    following = bare(words[index + 1])
    return (
        following.endswith("ing")
        or following.endswith("ed")
        or following in PREPOSITIONS
        or following in FINITE_VERBS
    )


def _compound_start(words: list[str], head: int) -> int:
    """Walk left over compound premodifiers ("medical", "tattoo") and stop at a
    determiner, preposition, verb, punctuation or descriptive adjective."""
    start = head
    while start > 0:
        previous = words[start - 1]
        word = bare(previous)
        if bare(previous) != previous.lower():
            break  # "Portrait, doctor" : punctuation ends the phrase
        if word in DETERMINERS or word in PREPOSITIONS or _is_descriptive(word):
            break
        if word.endswith("ing") or word in FINITE_VERBS or word in PLURAL_PERSON_WORDS:
            break
        start -= 1
    return start


def _is_descriptive(word: str) -> bool:
    # Suffixes of qualitative adjectives ("despondent", "hopeless", "tired"); classifiers
    # such as "medical" or "security" do not end so.
    return word in DESCRIPTIVE_ADJECTIVES or word.endswith(DESCRIPTIVE_SUFFIXES)


def _adjectives_before(words: list[str], start: int) -> set[str]:
    found: set[str] = set()
    index = start - 1
    while index >= 0 and _is_descriptive(bare(words[index])):
        found.add(bare(words[index]))
        index -= 1
    return found


def indefinite_article(next_word: str) -> str:
    """'a' or 'an' by the sound of ``next_word`` (spelling rules plus exceptions)."""
    word = next_word.lower()
    if re.match(r"(eu|uni|use|usu|one|once|ur)", word) and not word.startswith("unin"):
        return "a"
    if re.match(r"(hour|honest|honou?r|heir)", word):
        return "an"
    if re.match(r"^[aeiou]", word):
        return "an"
    # Acronyms read letter by letter: "an EMT", "an MRI technician"
    if next_word.isupper() and len(next_word) > 1 and next_word[0] in "AEFHILMNORSX":
        return "an"
    return "a"


@dataclass(frozen=True)
class Insertion:
    text: str
    inserted: str  # the taxonomy phrase or modifier that was added
    operation: str  # "before_noun", "after_noun" or "replace_generic"


def insert_phrase(
    text: str, slot: Slot, *, form: str, phrase: str, modifier: str = ""
) -> Insertion:
    """Insert one attribute phrase into the slot of ``text`` (see module docstring)."""
    words = words_of(text)
    if form == "postmodifier":
        head = words[slot.head]
        core, punctuation = SPLIT_PUNCT.match(head).groups()
        words[slot.head] = f"{core} {phrase}{punctuation}"
        return Insertion(" ".join(words), phrase, "after_noun")
    if form == "noun" and slot.head_word in GENERIC_HEADS and slot.start == slot.head:
        core, punctuation = SPLIT_PUNCT.match(words[slot.head]).groups()
        words[slot.head] = _match_case(phrase, core) + punctuation
        _fix_article(words, slot.start)
        return Insertion(" ".join(words), phrase, "replace_generic")
    added = modifier if form == "noun" else phrase
    if slot.start == 0:
        words[0] = _lower_first(words[0])
        words.insert(0, added[:1].upper() + added[1:])
    else:
        words.insert(slot.start, added)
        _fix_article(words, slot.start)
    return Insertion(" ".join(words), added, "before_noun")


def _match_case(phrase: str, original: str) -> str:
    if original[:1].isupper():
        return phrase[:1].upper() + phrase[1:]
    return phrase


def _lower_first(word: str) -> str:
    if word.isupper() and len(bare(word)) > 1:
        return word  # an acronym such as "EMT"
    return word[:1].lower() + word[1:]


def _fix_article(words: list[str], noun_phrase_start: int) -> None:
    index = noun_phrase_start - 1
    if index < 0 or words[index].lower() not in {"a", "an"}:
        return
    article = indefinite_article(words[noun_phrase_start])
    words[index] = _match_case(article, words[index])
