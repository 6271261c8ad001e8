# ruff: noqa: E501  (the pairs are a table of sentences; a sentence is not wrapped)
"""Write ``bench/data/pairs_holdout3.jsonl``: a fourth, independent set of faithful /
corrupted answer pairs, written without looking at the verifier's code, its
documentation, or the rows of the three earlier sets (``pairs.jsonl``,
``pairs_holdout.jsonl``, ``pairs_holdout2.jsonl``). Nobody develops the verifier against
it: it gives the final, honest figure of how general the verifier's rules are.

The rows have the fields of ``pairs.jsonl`` (see ``pairs.py``). Most passages come from
the full-text research papers of COVID-QA (``covidqa/200423_covidQA.json``, a user's
kind of document: abstracts, methods and results with numbers, strains, dates and
accession numbers); the rest from chapters of the Rust book and topics of Python's
reference that no earlier set uses. Each pair below names its source (``cv:`` a COVID-QA
``document_id``, ``rb:`` a Rust book chapter file, ``py:`` a topic of
``pydoc_data.topics``), one phrase per evidence object (the one paragraph holding it is
the excerpt, read from the source here, so the evidence is verbatim: for COVID-QA a
paragraph of the paper's context as the data set ships it, paragraphs being separated by
blank lines; for the Rust book code blocks dropped and Markdown marks removed by
``pairs.clean_md``; for Python's reference whitespace collapsed), the question, a
faithful answer and a corrupted one with its kind of corruption (:data:`CORRUPTIONS`).

Faithful answers are written as users and models write them: whole sentences, light
paraphrase, two-sentence answers, bare spans (a name, number or identifier), quoted
titles, a few claim-lattice rows with ``[E1]`` pointers. Corruptions are one minimal
adversarial edit that makes the answer wrong while keeping most of the passage's words:
a swapped entity or number, a dropped or added negation, a fragment of a title, a wrong
bare name (often one that the evidence also holds), a reversed direction (more / less,
highest / lowest), a wrong combination of two facts the evidence states separately, two
roles swapped, a wrong unit or scale, or a ``scope`` edit that strengthens a claim past
its evidence (some → all, perhaps → must, particularly → only).

Run from the repository root: ``python bench/data/build_pairs_holdout3.py [--data DIR]``.
The Python reference excerpts are those of the Python the file was built with
(:data:`BUILT_WITH`): another version's ``pydoc_data`` words some topics differently.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pairs import clean_md, normalize  # noqa: E402

HOLDOUT3_PATH = HERE / "pairs_holdout3.jsonl"
BUILT_WITH = (3, 11)
COVIDQA_FILE = Path("covidqa") / "200423_covidQA.json"
CORRUPTIONS = (
    "swapped_entity",
    "changed_number",
    "dropped_negation",
    "added_negation",
    "title_fragment",
    "bare_name",
    "swapped_direction",
    "wrong_combination",
    "role_swap",
    "unit_or_scale",
    "scope",
)
SOURCES = {"cv": "covidqa", "rb": "rust-book", "py": "python-reference"}
CL, QM = "claim-lattice", "quote"


class Pair(NamedTuple):
    pid: str
    src: str
    phrases: tuple[str, ...]
    question: str
    faithful: str
    corrupted: str
    corruption: str
    mode: str = QM


BCOV = "cv:1546"
IBV = "cv:1547"
WHO = "cv:1549"
ECHO = "cv:1550"
MENTAL = "cv:2432"
SHENZHEN = "cv:2466"
TRANSPORT = "cv:2450"
PRINCESS = "cv:2555"
WUHAN = "cv:2554"
EDITORS = "cv:2651"
TRAITS = "rb:ch10-02-traits.md"
DEREF = "rb:ch15-02-deref.md"
PATTERNS = "rb:ch19-01-all-the-places-for-patterns.md"
FUNCDEF = "py:function"
FUNCOBJ = "py:typesfunctions"

PAIRS: list[Pair] = [
    # --- COVID-QA: a French bovine coronavirus genome --------------------------------
    Pair("cv-bcov-length", BCOV, ("We obtained a sequence counting 30,847 nucleotides",),
         "How long is the genome sequence obtained for the French BCoV strain?",
         "The sequence they obtained counts 30,847 nucleotides.",
         "The sequence they obtained counts 38,047 nucleotides.",
         "changed_number"),
    Pair("cv-bcov-sample", BCOV, ("obtained from a fecal sample collected from a 1-week-old calf",),
         "Where did the sample of the BCoV/FRA-EPI/CAEN/2014/13 strain come from?",
         "It was obtained from a fecal sample collected from a 1-week-old calf in Normandy in 2014.",
         "It was obtained from a fecal sample collected from a 1-week-old calf in Brittany in 2014.",
         "swapped_entity"),
    Pair("cv-bcov-orf1ab", BCOV, ("the orf1ab (20kb nucleotides",),
         "Which strain is the orf1ab gene of the French BCoV closely related to?",
         "The orf1ab gene is closely related to the Dromedary camel coronavirus (DcCoV) HKU23-23-362F strain from the United Arab Emirates, with a nucleotide identity of 99.19%.",
         "The orf1ab gene is closely related to the BCoV Bubalus/Italy/179/07-11 strain, with a nucleotide identity of 99.19%.",
         "wrong_combination"),
    Pair("cv-bcov-egene", BCOV, ("The E gene is closely related to the Chinese Bovine coronavirus",),
         "What nucleotide identity does the E gene share with the strain BCV-AKS-01?",
         "100%",
         "99.28%",
         "changed_number"),
    Pair("cv-bcov-winter", BCOV, ("particularly during winter",),
         "When does BCoV cause disease in cattle?",
         "BCoV is responsible for respiratory and enteric diseases in cattle, particularly during winter.",
         "BCoV is responsible for respiratory and enteric diseases in cattle, only during winter.",
         "scope"),
    Pair("cv-bcov-accession", BCOV, ("has been deposited in GenBank under the accession number KX982264", "with a nucleotide identity of 99.19%"),
         "Under which GenBank accession number was the complete genome of the French BCoV isolate deposited?",
         "KX982264",
         "KF906251",
         "bare_name"),
    Pair("cv-bcov-count", BCOV, ("the 19 complete BCoV genome sequences available in GenBank",),
         "Where did the complete BCoV genomes already in GenBank come from?",
         "The 19 complete BCoV genome sequences available in GenBank originated from the United States or Asia.",
         "The 19 complete BCoV genome sequences available in GenBank originated from Europe or Asia.",
         "swapped_entity"),
    # --- COVID-QA: a nephropathogenic infectious bronchitis virus -----------------------
    Pair("cv-ibv-length", IBV, ("The complete genome of the SAIBK strain is 27,534 nucleotides",),
         "How long is the complete genome of the SAIBK strain?",
         "It is 27,534 nucleotides long, including the poly(A) tail.",
         "It is 27,534 kilobases long, including the poly(A) tail.",
         "unit_or_scale"),
    Pair("cv-ibv-highest", IBV, ("shows the highest identity (94.3%)",),
         "Which strain does the SAIBK genome resemble most?",
         "The SAIBK genome shows the highest identity (94.3%) to the Chinese IBV strain SC021202.",
         "The SAIBK genome shows the lowest identity (94.3%) to the Chinese IBV strain SC021202.",
         "swapped_direction"),
    Pair("cv-ibv-parents", IBV, ("SAIBK is a chimera virus, with recombination by the SC021202 strain",),
         "What are the parents of the SAIBK recombinant?",
         "SAIBK is a chimera virus. The SC021202 strain is its major parent and the H120 vaccine strain its minor parent.",
         "SAIBK is a chimera virus. The H120 vaccine strain is its major parent and the SC021202 strain its minor parent.",
         "role_swap"),
    Pair("cv-ibv-isolated", IBV, ("which was isolated in the Sichuan province of China in 2005", "the SC021202 strain was isolated from chickens vaccinated with H120"),
         "Where and when was the SAIBK strain isolated?",
         "SAIBK was isolated in the Sichuan province of China in 2005.",
         "SAIBK was isolated in the Sichuan province of China in 2003.",
         "wrong_combination"),
    Pair("cv-ibv-serotype", IBV, ("S1 analysis indicated that the SAIBK strain has a 4/91-like serotype",),
         "What serotype does the SAIBK strain have?",
         "S1 analysis indicated that the SAIBK strain has a 4/91-like serotype.",
         "S1 analysis indicated that the SAIBK strain has an H120-like serotype.",
         "swapped_entity"),
    Pair("cv-ibv-vaccines", IBV, ("the most popularly used IBV vaccine strains, H120, H52, and M41",),
         "How similar is SAIBK to the common IBV vaccine strains?",
         "It has lower nucleotide identities of 88.1%, 87.9%, and 87.7% to the most popularly used IBV vaccine strains, H120, H52, and M41, respectively [E1]",
         "It has lower nucleotide identities of 88.1%, 87.9%, and 87.7% to the most popularly used IBV vaccine strains, M41, H52, and H120, respectively [E1]",
         "role_swap", CL),
    Pair("cv-ibv-genome", IBV, ("It is an enveloped, unsegmented, positive-sense",),
         "What kind of genome does infectious bronchitis virus have?",
         "It is an enveloped, unsegmented, positive-sense, single-stranded RNA virus with a genome of approximately 27.6 kb.",
         "It is an enveloped, segmented, positive-sense, single-stranded RNA virus with a genome of approximately 27.6 kb.",
         "dropped_negation"),
    # --- COVID-QA: an editorial on WHO's next Director-General --------------------------
    Pair("cv-who-chan", WHO, ("Chan will step down from WHO on June 30, 2017",),
         "When will Chan step down from WHO?",
         "Chan will step down from WHO on June 30, 2017 [E1]",
         "Chan will step down from WHO on June 30, 2016 [E1]",
         "changed_number", CL),
    Pair("cv-who-seidlein", WHO, ("Instead of electing a new Director-General, Lorenz Von Seidlein",),
         "What did Lorenz Von Seidlein argue?",
         "Instead of electing a new Director-General, he argued that replacing the WHO with new, more appropriate organizations is the logical solution.",
         "Instead of replacing the WHO with new organizations, he argued that electing a new Director-General is the logical solution.",
         "swapped_direction"),
    Pair("cv-who-gostin", WHO, ("WHO urgently needs a bold reform agenda", "According to Kruk"),
         "Who told PLOS Medicine that WHO urgently needs a bold reform agenda?",
         "Gostin",
         "Kruk",
         "bare_name"),
    Pair("cv-who-budget", WHO, ("A substantial proportion of WHO's existing budget is earmarked",),
         "What limits WHO's financial flexibility?",
         "A substantial proportion of WHO's existing budget is earmarked for specific projects, leaving the organization with little financial flexibility.",
         "A substantial proportion of WHO's existing budget is not earmarked for specific projects, leaving the organization with little financial flexibility.",
         "added_negation"),
    Pair("cv-who-ncd", WHO, ("noncommunicable diseases, including cancer, dementia",),
         "Which diseases does the editorial say are growing in prevalence?",
         "Noncommunicable diseases, including cancer, dementia, and mental illnesses, are growing in prevalence.",
         "Communicable diseases, including cancer, dementia, and mental illnesses, are growing in prevalence.",
         "dropped_negation"),
    Pair("cv-who-leader", WHO, ("should be a proven leader and advocate",),
         "Where should WHO's next Director-General come from?",
         "WHO's next Director-General should be a proven leader and advocate, perhaps from a low-income or middle-income country.",
         "WHO's next Director-General should be a proven leader and advocate, and must come from a low-income or middle-income country.",
         "scope"),
    # --- COVID-QA: an echovirus 30 genome from a meningitis cluster ----------------------
    Pair("cv-echo-detected", ECHO, ("detected EV from 19 of 30 patients (63%)",),
         "In how many patients of the cluster was enterovirus detected?",
         "The VRDL detected EV from 19 of 30 patients (63%) by real-time RT-PCR.",
         "The VRDL detected EV from 19 of 30 patients (79%) by real-time RT-PCR.",
         "wrong_combination"),
    Pair("cv-echo-csf", ECHO, ("Fifteen of 19 (79%) EV-positive patients were confirmed",),
         "How was echovirus 30 confirmed in the EV-positive patients?",
         "Fifteen of 19 (79%) EV-positive patients were confirmed to have echovirus 30, using cerebrospinal fluid samples.",
         "Fifteen of 19 (79%) EV-positive patients were confirmed to have echovirus 30, using blood samples.",
         "swapped_entity"),
    Pair("cv-echo-report", ECHO, ("within 1 day of identification of etiology",),
         "How quickly must meningitis cases be reported to the CDPH?",
         "Within 1 day of identification of etiology.",
         "Within 1 week of identification of etiology.",
         "unit_or_scale"),
    Pair("cv-echo-gc", ECHO, ("The total GC content is 48.3% for 7,155 bases",),
         "What is the GC content of the E-30 genome?",
         "The total GC content is 48.3% for 7,155 bases.",
         "The total GC content is 84.3% for 7,155 bases.",
         "changed_number"),
    Pair("cv-echo-identity", ECHO, ("shares less than 89% nucleotide identity (NI)",),
         "How does the new E-30 genome compare with other public E-30 sequences?",
         "It shares less than 89% nucleotide identity and less than 98% amino acid identity with other publicly available E-30 sequences.",
         "It shares more than 89% nucleotide identity and more than 98% amino acid identity with other publicly available E-30 sequences.",
         "swapped_direction"),
    Pair("cv-echo-illness", ECHO, ("later found to be associated with respiratory illness",),
         "Which illnesses are echoviruses associated with?",
         "Echoviruses were later found to be associated with respiratory illness, hand-foot-and-mouth disease, and aseptic meningitis.",
         "Echoviruses were later found to be associated only with aseptic meningitis.",
         "scope"),
    Pair("cv-echo-position", ECHO, ("do not necessarily represent the official position",),
         "Do the findings represent the official position of the CDC?",
         "No. The findings and conclusions are those of the authors and do not necessarily represent the official position of the CDC.",
         "Yes. The findings and conclusions are those of the authors and represent the official position of the CDC.",
         "dropped_negation"),
    Pair("cv-echo-genbank", ECHO, ("has been deposited in GenBank under the accession number MK238483",),
         "Under which GenBank accession number was the E-30 sequence deposited?",
         "MK238483",
         "SRR10082176",
         "bare_name"),
    Pair("cv-echo-title", ECHO, ("Nearly Complete Genome Sequence of an Echovirus 30 Strain",),
         "What is the title of the paper on the echovirus 30 strain from California?",
         "It is titled \"Nearly Complete Genome Sequence of an Echovirus 30 Strain from a Cluster of Aseptic Meningitis Cases in California, September 2017\".",
         "It is titled \"Complete Genome Sequence of an Echovirus 30 Strain\".",
         "title_fragment"),
    # --- COVID-QA: mental health of health care workers ---------------------------------
    Pair("cv-mental-rate", MENTAL, ("with a participation rate of 68.7%",),
         "What was the participation rate of the survey?",
         "1257 of 1830 contacted individuals completed the survey, a participation rate of 68.7%.",
         "1257 of 1830 contacted individuals completed the survey, a participation rate of 86.7%.",
         "changed_number"),
    Pair("cv-mental-hospitals", MENTAL, ("mental health measurements from 1257 health care workers in 34 hospitals",),
         "How many health care workers in how many hospitals were surveyed?",
         "The study collected data from 1257 health care workers in 34 hospitals.",
         "The study collected data from 1830 health care workers in 34 hospitals.",
         "wrong_combination"),
    Pair("cv-mental-nurses", MENTAL, ("764 (60.8%) were nurses",),
         "How many of the participants were nurses and how many physicians?",
         "764 (60.8%) were nurses, and 493 (39.2%) were physicians.",
         "764 (60.8%) were physicians, and 493 (39.2%) were nurses.",
         "role_swap"),
    Pair("cv-mental-distress", MENTAL, ("and distress (899 [71.5%])",),
         "How many participants reported symptoms of distress?",
         "899 participants (71.5%) reported symptoms of distress.",
         "899 participants (71.5%) reported symptoms of insomnia.",
         "swapped_entity"),
    Pair("cv-mental-severe", MENTAL, ("reported more severe degrees of all measurements",),
         "Which health care workers reported more severe symptoms?",
         "Nurses, women, frontline health care workers, and those working in Wuhan reported more severe degrees of all measurements of mental health symptoms than other health care workers.",
         "Nurses, women, frontline health care workers, and those working in Wuhan reported less severe degrees of all measurements of mental health symptoms than other health care workers.",
         "swapped_direction"),
    Pair("cv-mental-gad", MENTAL, ("the 7-item Generalized Anxiety Disorder scale",),
         "Which instrument measured the symptoms of anxiety?",
         "The Chinese version of the 7-item Generalized Anxiety Disorder scale.",
         "The Chinese version of the 9-item Generalized Anxiety Disorder scale.",
         "changed_number"),
    Pair("cv-mental-dates", MENTAL, ("from January 29, 2020, to February 3, 2020",),
         "When was the survey data collected?",
         "From January 29, 2020, to February 3, 2020.",
         "From January 29, 2020, to March 3, 2020.",
         "swapped_entity"),
    # --- COVID-QA: critical care response in Shenzhen -----------------------------------
    Pair("cv-shenzhen-symptoms", SHENZHEN, ("including fever (98%), cough (76%), and diarrhea (3%)",),
         "How common are fever, cough and diarrhea among 2019-nCoV patients?",
         "Fever (98%), cough (76%), and diarrhea (3%).",
         "Fever (98%), cough (76%), and diarrhea (30%).",
         "changed_number"),
    Pair("cv-shenzhen-beds", SHENZHEN, ("reconstructing an existing hospital to become an IDH",),
         "How did Shenzhen expand its capacity for infectious disease patients?",
         "Shenzhen reconstructed an existing hospital to become an IDH with capability of 800 beds.",
         "Shenzhen built a temporary new hospital to become an IDH with capability of 800 beds.",
         "wrong_combination"),
    Pair("cv-shenzhen-city", SHENZHEN, ("Wuhan, the epicenter of the outbreak, is racing against time",),
         "Which city reconstructed an existing hospital rather than building new ones?",
         "Shenzhen",
         "Wuhan",
         "bare_name"),
    Pair("cv-shenzhen-r0", SHENZHEN, ("The basic reproductive number was estimated to be 2.2",),
         "What was the estimated basic reproductive number?",
         "It was estimated to be 2.2 (95% CI, 1.4 to 3.9), or as high as between 3.6 and 4.0.",
         "It was estimated to be 3.2 (95% CI, 1.4 to 3.9), or as high as between 3.6 and 4.0.",
         "changed_number"),
    Pair("cv-shenzhen-shedding", SHENZHEN, ("virus shedding can be prolonged",),
         "How long does virus shedding last?",
         "Virus shedding can be prolonged and last for more than 3 weeks according to some literature.",
         "Virus shedding always lasts for more than 3 weeks according to some literature.",
         "scope"),
    Pair("cv-shenzhen-mortality", SHENZHEN, ("our 2019-nCoV patients had zero mortality",),
         "How did mortality in Shenzhen compare with Wuhan?",
         "Their 2019-nCoV patients had zero mortality. The previously reported mortality in Wuhan ranged from 11 to 15%.",
         "Their 2019-nCoV patients had a mortality of 11 to 15%. The previously reported mortality in Wuhan was zero.",
         "role_swap"),
    Pair("cv-shenzhen-steroids", SHENZHEN, ("Low-dose systematic corticosteroids",),
         "Which corticosteroid treatment was encouraged?",
         "Low-dose systematic corticosteroids were encouraged.",
         "High-dose systematic corticosteroids were encouraged.",
         "swapped_direction"),
    Pair("cv-shenzhen-aerosol", SHENZHEN, ("aerosol-generating procedures, such as noninvasive ventilation",),
         "What effect do aerosol-generating procedures have on transmission risk?",
         "The higher viral load and aerosol-generating procedures, such as noninvasive ventilation, magnify the exposure and transmission risk.",
         "The higher viral load and aerosol-generating procedures, such as noninvasive ventilation, reduce the exposure and transmission risk.",
         "swapped_direction"),
    Pair("cv-shenzhen-rooms", SHENZHEN, ("negative pressure rooms in isolated units",),
         "What rooms should 2019-nCoV patients be admitted to?",
         "2019-nCoV patients should be admitted to singlebedded, negative pressure rooms in isolated units with intensive care and monitoring [E1]",
         "2019-nCoV patients should be admitted to singlebedded, positive pressure rooms in isolated units with intensive care and monitoring [E1]",
         "swapped_entity", CL),
    Pair("cv-shenzhen-level", SHENZHEN, ("should happen not only at the level of hospital",),
         "At what level should the critical care response happen?",
         "Critical care response to the outbreak should happen not only at the level of hospital, but also at the level of the city.",
         "Critical care response to the outbreak should happen only at the level of hospital, not at the level of the city.",
         "dropped_negation"),
    Pair("cv-shenzhen-plan", SHENZHEN, ("Such a plan is mandatory for every hospital",),
         "Is a plan for fever triage and transfer to the IDH optional for hospitals?",
         "No, such a plan is mandatory for every hospital.",
         "Yes, such a plan is not mandatory for every hospital.",
         "added_negation"),
    # --- COVID-QA: safe patient transport -----------------------------------------------
    Pair("cv-transport-papr", TRANSPORT, ("Powered air-purifying respirators add a layer of safety",),
         "What adds a layer of safety for high-risk transports?",
         "Powered air-purifying respirators add a layer of safety on top of N95 respirators.",
         "N95 respirators add a layer of safety on top of powered air-purifying respirators.",
         "role_swap"),
    Pair("cv-transport-first", TRANSPORT, ("firstly, early recognition of the deteriorating patient",),
         "What is the first principle for HCWs who transport COVID-19 patients?",
         "Early recognition of the deteriorating patient.",
         "Post-transport decontamination.",
         "wrong_combination"),
    Pair("cv-transport-ecmo", TRANSPORT, ("Inter-hospital transfer may be required for extracorporeal membrane oxygenation",),
         "When may an inter-hospital transfer be needed?",
         "For ECMO, if patients with COVID-19 develop severe acute respiratory distress syndrome within hospitals with only basic ventilation facilities.",
         "For ECMO, if patients with COVID-19 develop severe acute respiratory distress syndrome within hospitals with advanced ventilation facilities.",
         "swapped_entity"),
    Pair("cv-transport-pandemic", TRANSPORT, ("Although COVID-19 has not been officially labelled as a pandemic yet",),
         "Had COVID-19 been labelled a pandemic when the letter was written?",
         "No. The letter says COVID-19 has not been officially labelled as a pandemic yet.",
         "Yes. The letter says COVID-19 has been officially labelled as a pandemic.",
         "dropped_negation"),
    Pair("cv-transport-priority", TRANSPORT, ("Mitigating the spread of COVID-19 is a national priority in Singapore",),
         "Where is mitigating the spread of COVID-19 a national priority?",
         "Mitigating the spread of COVID-19 is a national priority in Singapore.",
         "Mitigating the spread of COVID-19 is a national priority in Malaysia.",
         "swapped_entity"),
    # --- COVID-QA: the Diamond Princess ---------------------------------------------------
    Pair("cv-princess-persons", PRINCESS, ("consisting of 2666 passengers and 1045 crew members",),
         "How many people were on board the Diamond Princess?",
         "A total of 3711 persons: 2666 passengers and 1045 crew members.",
         "A total of 3711 persons: 1045 passengers and 2666 crew members.",
         "role_swap"),
    Pair("cv-princess-cases", PRINCESS, ("199 symptomatic cases have been diagnosed on board",),
         "How many symptomatic cases had been diagnosed on board by 24 February?",
         "199 symptomatic cases had been diagnosed on board as of 24 February.",
         "1,990 symptomatic cases had been diagnosed on board as of 24 February.",
         "unit_or_scale"),
    Pair("cv-princess-quarantine", PRINCESS, ("for a matter of 14 days of quarantine",),
         "How long was the quarantine on board?",
         "The movement of all passengers was restricted from 5 February, for 14 days of quarantine.",
         "The movement of all passengers was restricted from 5 February, for 14 weeks of quarantine.",
         "unit_or_scale"),
    Pair("cv-princess-incubation", PRINCESS, ("the mean incubation period has been estimated to be about 5.0 days", "the mean and standard deviation are 5.0 and 3.0 days"),
         "What is the mean incubation period used in the study?",
         "About 5.0 days.",
         "About 3.0 days.",
         "wrong_combination"),
    Pair("cv-princess-peak", PRINCESS, ("the peak incidence was identified for the period from 2 to 4 February",),
         "When was the peak incidence of infection among passengers?",
         "The peak incidence among passengers both with and without close contact was from 2 to 4 February.",
         "The peak incidence among passengers both with and without close contact was from 8 to 10 February.",
         "wrong_combination"),
    Pair("cv-princess-without", PRINCESS, ("it was predicted that the cumulative incidence with and without close contact would have been 1373",),
         "What cumulative incidence was predicted without the intervention?",
         "1373 cases with close contact and 766 cases without close contact.",
         "766 cases with close contact and 1373 cases without close contact.",
         "role_swap"),
    Pair("cv-princess-index", PRINCESS, ("the index case, defined as the first identified case",),
         "Who was the index case on the Diamond Princess?",
         "A passenger who started coughing from 19 January 2020 on board and disembarked in Hong Kong on 25 January.",
         "A crew member who started coughing from 19 January 2020 on board and disembarked in Hong Kong on 25 January.",
         "swapped_entity"),
    Pair("cv-princess-success", PRINCESS, ("was highly successful in greatly reducing the number of secondary transmissions",),
         "Did the movement restriction policy work?",
         "Yes. The movement restriction policy from 5 February 2020 was highly successful in greatly reducing the number of secondary transmissions on board.",
         "No. The movement restriction policy from 5 February 2020 was not successful in reducing the number of secondary transmissions on board.",
         "added_negation"),
    Pair("cv-princess-contact", PRINCESS, ("Close contact was defined as having at least one cabinmate",),
         "How was close contact defined?",
         "As having at least one cabinmate who was confirmed by RT-PCR.",
         "As having at most one cabinmate who was confirmed by RT-PCR.",
         "swapped_direction"),
    Pair("cv-princess-onset", PRINCESS, ("The highest incidence of illness onset was observed on 7 February",),
         "On which day was the highest incidence of illness onset observed?",
         "7 February",
         "14 February",
         "changed_number"),
    Pair("cv-princess-title", PRINCESS, ("Backcalculating the Incidence of Infection with COVID-19",),
         "What is the title of Nishiura's paper on the cruise ship outbreak?",
         "\"Backcalculating the Incidence of Infection with COVID-19 on the Diamond Princess\"",
         "\"Incidence of Infection with COVID-19\"",
         "title_fragment"),
    # --- COVID-QA: the extent of transmission in Wuhan -----------------------------------
    Pair("cv-wuhan-estimate", WUHAN, ("the cumulative incidence in China is estimated at 5502 cases",),
         "What was the estimated cumulative incidence in China as of 24 January 2020?",
         "5502 cases (95% confidence interval: 3027, 9057).",
         "830 cases (95% confidence interval: 3027, 9057).",
         "wrong_combination"),
    Pair("cv-wuhan-exported", WUHAN, ("thirteen cases were exported to Japan",),
         "How many cases had been exported from China as of 22 January 2020?",
         "Thirteen cases were exported to Japan, Singapore, South Korea, Taiwan, Thailand, Vietnam and the United States.",
         "Twenty-six cases were exported to Japan, Singapore, South Korea, Taiwan, Thailand, Vietnam and the United States.",
         "changed_number"),
    Pair("cv-wuhan-t", WUHAN, ("thus, T = 12.5 days",),
         "What value of T did the authors assume?",
         "T, the sum of the incubation and infectious periods, is 12.5 days (3.2 and 9.3 days).",
         "T, the sum of the incubation and infectious periods, is 12.5 hours (3.2 and 9.3 hours).",
         "unit_or_scale"),
    Pair("cv-wuhan-icl", WUHAN, ("Imperial College London (ICL)",),
         "What did the Imperial College London group estimate?",
         "Imperial College London estimated 4000 cases (95% CI: 1000, 9700) based on three importation events.",
         "The University of Hong Kong estimated 4000 cases (95% CI: 1000, 9700) based on three importation events.",
         "swapped_entity"),
    Pair("cv-wuhan-catchment", WUHAN, ("we use 11.1 million",),
         "What catchment population do the two studies assume?",
         "The Northeastern study assumes 10 million, while the authors use 11.1 million.",
         "The Northeastern study assumes 11.1 million, while the authors use 10 million.",
         "role_swap"),
    Pair("cv-wuhan-hongkong", WUHAN, ("Macau and Hong Kong, were excluded from the analysis",),
         "Why were Macau and Hong Kong excluded from the analysis?",
         "Because they are commutable by land, and the first case in Hong Kong was not via air travel.",
         "Because they are commutable by land, and the first case in Hong Kong was via air travel.",
         "dropped_negation"),
    Pair("cv-wuhan-early", WUHAN, ("no human-to-human transmission was directly observed",),
         "Did early reports from Wuhan observe human-to-human transmission?",
         "No. Early reports stated that there were only tens of cases and that no human-to-human transmission was directly observed.",
         "Yes. Early reports stated that there were only tens of cases and that human-to-human transmission was directly observed.",
         "dropped_negation"),
    Pair("cv-wuhan-thousands", WUHAN, ("The most plausible number of infections is in the order of thousands",),
         "What is the most plausible number of infections?",
         "The most plausible number of infections is in the order of thousands, rather than hundreds.",
         "The most plausible number of infections is in the order of hundreds, rather than thousands.",
         "swapped_direction"),
    Pair("cv-wuhan-thailand", WUHAN, ("The first exportation event in Thailand suggests 423 cases",),
         "What did the first exportation event in Thailand suggest?",
         "It suggests 423 cases, with an upper confidence limit of 1863 cases.",
         "It suggests 1863 cases, with an upper confidence limit of 423 cases.",
         "role_swap"),
    Pair("cv-wuhan-share", WUHAN, ("of which 100q = 2.1% were from Wuhan",),
         "What share of the inbound passengers from China came from Wuhan?",
         "2.1%",
         "21%",
         "unit_or_scale"),
    # --- COVID-QA: a Eurosurveillance editors' note --------------------------------------
    Pair("cv-editors-cases", EDITORS, ("614 laboratory-confirmed cases and 17 deaths",),
         "How many cases and deaths had been reported as at 23 January?",
         "614 laboratory-confirmed cases and 17 deaths have been reported [E1]",
         "614 laboratory-confirmed cases and 71 deaths have been reported [E1]",
         "changed_number", CL),
    Pair("cv-editors-pheic", EDITORS, ("decided not to declare a public health emergency",),
         "Did the WHO Director-General declare a public health emergency of international concern?",
         "No. Tedros Adhanom Ghebreyesus decided not to declare a public health emergency of international concern.",
         "Yes. Tedros Adhanom Ghebreyesus decided to declare a public health emergency of international concern.",
         "dropped_negation"),
    Pair("cv-editors-genes", EDITORS, ("RT-PCR of the E and RdRp genes",),
         "Which genes does the diagnostic RT-PCR of Corman et al. target?",
         "The E and RdRp genes.",
         "The E and N genes.",
         "swapped_entity"),
    Pair("cv-editors-labs", EDITORS, ("the assays were validated in five international laboratories",),
         "In how many laboratories were the assays validated?",
         "The assays were validated in five international laboratories.",
         "The assays were validated in fifteen international laboratories.",
         "changed_number"),
    Pair("cv-editors-sequences", EDITORS, ("viral genome sequences were released by Chinese researchers on 10 January",),
         "When were the viral genome sequences released?",
         "Chinese researchers released viral genome sequences on 10 January, and 2 days later four further sequences were made available on GISAID.",
         "Chinese researchers released viral genome sequences on 10 January, and 2 weeks later four further sequences were made available on GISAID.",
         "unit_or_scale"),
    Pair("cv-editors-h2h", EDITORS, ("there is evidence for some human-to-human transmission in China",),
         "Is there evidence of human-to-human transmission?",
         "There is evidence for some human-to-human transmission in China.",
         "There is evidence for sustained human-to-human transmission throughout China.",
         "scope"),
    # --- Rust book: traits ----------------------------------------------------------------
    Pair("rb-traits-280", TRAITS, ("a SocialPost that can have, at most, 280 characters",),
         "How long can a SocialPost be?",
         "A SocialPost can have, at most, 280 characters.",
         "A SocialPost can have, at least, 280 characters.",
         "swapped_direction"),
    Pair("rb-traits-local", TRAITS, ("only if either the trait or the type, or both, are local to our crate",),
         "When can we implement a trait on a type?",
         "We can implement a trait on a type only if either the trait or the type, or both, are local to our crate.",
         "We can implement a trait on a type only if both the trait and the type are local to our crate.",
         "scope"),
    Pair("rb-traits-orphan", TRAITS, ("we can’t implement the Display trait on Vec<T>",),
         "Can the aggregator crate implement Display on Vec<T>?",
         "No, because Display and Vec<T> are both defined in the standard library and aren't local to the aggregator crate.",
         "Yes, because Display and Vec<T> are both defined in the standard library and are local to the aggregator crate.",
         "dropped_negation"),
    Pair("rb-traits-blanket", TRAITS, ("the standard library implements the ToString trait on any type",),
         "What blanket implementation does the standard library provide?",
         "The standard library implements the ToString trait on any type that implements the Display trait.",
         "The standard library implements the Display trait on any type that implements the ToString trait.",
         "role_swap"),
    Pair("rb-traits-single", TRAITS, ("you can only use impl Trait if you’re returning a single type",),
         "When can impl Trait be used as a return type?",
         "You can only use impl Trait if you're returning a single type.",
         "You can use impl Trait whether you're returning a single type or several types.",
         "scope"),
    Pair("rb-traits-default", TRAITS, ("Creating a default implementation doesn’t require us to change anything",),
         "Does adding a default implementation force changes to the SocialPost implementation?",
         "No. Creating a default implementation doesn't require changing anything about the implementation of Summary on SocialPost.",
         "Yes. Creating a default implementation requires changing the implementation of Summary on SocialPost.",
         "dropped_negation"),
    Pair("rb-traits-compile", TRAITS, ("But Rust moves these errors to compile time",),
         "When does Rust report a call of a method a type doesn't define?",
         "Rust moves these errors to compile time [E1]",
         "Rust moves these errors to runtime [E1]",
         "swapped_entity", CL),
    Pair("rb-traits-name", TRAITS, ("which is Summary in this case",),
         "What is the name of the trait declared in Listing 10-12?",
         "Summary",
         "Display",
         "bare_name"),
    Pair("rb-traits-section", TRAITS, ("Returning either a NewsArticle or a SocialPost isn’t allowed",),
         "Which section shows how to return either of two types?",
         "The \"Using Trait Objects to Abstract over Shared Behavior\" section of Chapter 18.",
         "The \"Shared Behavior\" section of Chapter 18.",
         "title_fragment"),
    # --- Rust book: Deref -------------------------------------------------------------------
    Pair("rb-deref-coerce", DEREF, ("Rust will also coerce a mutable reference to an immutable one",),
         "Which way can Rust coerce between mutable and immutable references?",
         "Rust will coerce a mutable reference to an immutable one, but the reverse is not possible.",
         "Rust will coerce an immutable reference to a mutable one, but the reverse is not possible.",
         "role_swap"),
    Pair("rb-deref-operator", DEREF, ("customize the behavior of the dereference operator",),
         "What does implementing the Deref trait let you customize?",
         "The behavior of the dereference operator.",
         "The behavior of the multiplication operator.",
         "swapped_entity"),
    Pair("rb-deref-compare", DEREF, ("Comparing a number and a reference to a number isn’t allowed",),
         "Can you compare a number with a reference to a number directly?",
         "No. Comparing a number and a reference to a number isn't allowed because they're different types.",
         "Yes. Comparing a number and a reference to a number is allowed even though they're different types.",
         "dropped_negation"),
    # --- Rust book: patterns --------------------------------------------------------------
    Pair("rb-patterns-purple", PATTERNS, ("this example will print Using purple as the background color",),
         "What does the if let example of Listing 19-3 print with its hardcoded values?",
         "It prints \"Using purple as the background color\".",
         "It prints \"Using blue as the background color\".",
         "swapped_entity"),
    Pair("rb-patterns-exhaustive", PATTERNS, ("the compiler doesn’t check for exhaustiveness",),
         "What is the downside of if let compared with match?",
         "The compiler doesn't check if let expressions for exhaustiveness, whereas it does with match expressions.",
         "The compiler doesn't check match expressions for exhaustiveness, whereas it does with if let expressions.",
         "role_swap"),
    Pair("rb-patterns-tuesday", PATTERNS, ("today is Tuesday, the background color is green",),
         "What background color is used when no favorite color is given and today is Tuesday?",
         "Green",
         "Blue",
         "bare_name"),
    Pair("rb-patterns-recv", PATTERNS, ("the recv method returns an Ok each time a message arrives",),
         "What does recv return in the while let loop?",
         "An Ok each time a message arrives, as long as the sender exists, and then an Err once the sender side disconnects.",
         "An Err each time a message arrives, as long as the sender exists, and then an Ok once the sender side disconnects.",
         "role_swap"),
    Pair("rb-patterns-enumerate", PATTERNS, ("The first value produced is the tuple (0, 'a')",),
         "What is the first value the enumerate adaptor produces in Listing 19-5?",
         "The tuple (0, 'a').",
         "The tuple (1, 'a').",
         "changed_number"),
    Pair("rb-patterns-ignoring", PATTERNS, ("We’ll cover the pattern in more detail in",),
         "Which section covers the _ pattern in more detail?",
         "\"Ignoring Values in a Pattern\", later in the chapter.",
         "\"Ignoring Values\", later in the chapter.",
         "title_fragment"),
    # --- Python reference: function definitions -----------------------------------------
    Pair("py-function-defaults", FUNCDEF, ("Default parameter values are evaluated from left to right",),
         "When are default parameter values evaluated?",
         "Default parameter values are evaluated from left to right when the function definition is executed.",
         "Default parameter values are evaluated from left to right each time the function is called.",
         "swapped_entity"),
    Pair("py-function-star", FUNCDEF, ("it is initialized to a tuple receiving any excess positional parameters",),
         "What is a *identifier parameter initialized to?",
         "A tuple receiving any excess positional parameters, defaulting to the empty tuple.",
         "A new ordered mapping receiving any excess positional parameters, defaulting to a new empty mapping.",
         "wrong_combination"),
    Pair("py-function-slash", FUNCDEF, ("Parameters before “\"/\"” are positional-only parameters",),
         "How may parameters before the / be passed?",
         "They are positional-only parameters and may only be passed by positional arguments.",
         "They are keyword-only parameters and may only be passed by keyword arguments.",
         "swapped_entity"),
    Pair("py-function-annotations", FUNCDEF, ("The presence of annotations does not change the semantics of a function",),
         "Do annotations change what a function does?",
         "No, the presence of annotations does not change the semantics of a function.",
         "Yes, the presence of annotations changes the semantics of a function.",
         "dropped_negation"),
    Pair("py-function-decorator", FUNCDEF, ("invoked with the function object as the only argument",),
         "What is the result of a decorator expression called with?",
         "It is invoked with the function object as the only argument.",
         "It is invoked with the function name as the only argument.",
         "swapped_entity"),
    Pair("py-function-lambda", FUNCDEF, ("form is actually more powerful since it allows the execution of multiple statements",),
         "Which is more powerful, def or lambda?",
         "The def form is more powerful, since it allows the execution of multiple statements and annotations.",
         "The lambda form is more powerful, since it allows the execution of multiple statements and annotations.",
         "role_swap"),
    Pair("py-function-binds", FUNCDEF, ("A function definition is an executable statement",),
         "What does executing a function definition do?",
         "A function definition is an executable statement [E1]\nIts execution binds the function name in the current local namespace to a function object [E1]",
         "A function definition is an executable statement [E1]\nIts execution binds the function name in the current global namespace to a function object [E1]",
         "swapped_entity", CL),
    Pair("py-function-following", FUNCDEF, ("all following parameters up until the",),
         "If a parameter has a default value, what must the parameters after it have?",
         "All following parameters up until the * must also have a default value.",
         "All following parameters, including those after the *, must also have a default value.",
         "scope"),
    Pair("py-typesfunctions-flavors", FUNCOBJ, ("There are really two flavors of function objects",),
         "How many flavors of function objects are there?",
         "There are two flavors of function objects: built-in functions and user-defined functions.",
         "There are three flavors of function objects: built-in functions and user-defined functions.",
         "changed_number"),
]  # fmt: skip


_FENCE = re.compile(r"^```.*?^```[^\n]*$", re.MULTILINE | re.DOTALL)


@cache
def _covidqa(data: Path) -> dict[str, str]:
    """Each COVID-QA paper's context by its ``document_id``."""
    papers = json.loads((data / COVIDQA_FILE).read_text(encoding="utf-8"))["data"]
    return {str(p["document_id"]): str(p["context"]) for a in papers for p in a["paragraphs"]}


def covidqa_paragraphs(context: str) -> list[str]:
    """The paragraphs of a COVID-QA context: its blank-line separated blocks, stripped."""
    return [p.strip() for p in re.split(r"\n\s*\n", context) if p.strip()]


def source_paragraphs(src: str, data: Path) -> tuple[str, list[str]]:
    """The title and the paragraphs of a source named ``cv:<document id>``,
    ``rb:<file>`` or ``py:<topic>``, as excerpts are stored (see the module doc)."""
    corpus, _, name = src.partition(":")
    if corpus == "cv":
        paras = covidqa_paragraphs(_covidqa(data)[name])
        return paras[0].splitlines()[0].strip(), paras
    if corpus == "rb":
        raw = (data / "rust-book" / "src" / name).read_text(encoding="utf-8")
        heads = (line.lstrip("#").strip() for line in raw.splitlines() if line.startswith("#"))
        title = next(heads, name)
        body = _FENCE.sub("", raw)
        return title, [clean_md(p) for p in re.split(r"\n\s*\n", body) if p.strip()]
    from pydoc_data.topics import topics

    body = topics[name]
    title = body.strip().splitlines()[0].strip()
    return title, [" ".join(p.split()) for p in re.split(r"\n\s*\n", body) if p.strip()]


def source_name(src: str) -> str:
    corpus, _, name = src.partition(":")
    return f"{SOURCES[corpus]}:{name}"


def build(data: Path) -> list[dict[str, object]]:
    """The rows of the file; raises ``SystemExit`` when a phrase is in no paragraph of its
    source or in more than one, or when a pair names an unknown corruption."""
    rows: list[dict[str, object]] = []
    for p in PAIRS:
        if p.corruption not in CORRUPTIONS:
            raise SystemExit(f"{p.pid}: unknown corruption {p.corruption!r}")
        title, paras = source_paragraphs(p.src, data)
        evidence = []
        for n, phrase in enumerate(p.phrases, start=1):
            hits = [t for t in paras if normalize(phrase) in normalize(t)]
            if len(hits) != 1:
                raise SystemExit(f"{p.pid}: {len(hits)} paragraphs of {p.src} hold {phrase!r}")
            evidence.append({"pointer_id": f"E{n}", "title": title, "text": hits[0]})
        for side, answer, corruption in (("f", p.faithful, None), ("c", p.corrupted, p.corruption)):
            rows.append({
                "id": f"{p.pid}-{side}", "question": p.question, "answer": answer,
                "mode": p.mode, "evidence": evidence,
                "kind": "faithful" if side == "f" else "corrupted",
                "corruption": corruption, "source": source_name(p.src),
            })  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / ".." / "shared" / "data")
    args = ap.parse_args()
    if sys.version_info[:2] != BUILT_WITH:
        print(f"warning: built with Python {BUILT_WITH}; pydoc_data may differ", file=sys.stderr)
    rows = build(args.data)
    with HOLDOUT3_PATH.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} rows ({len(PAIRS)} pairs) to {HOLDOUT3_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
