# ruff: noqa: E501  (the pairs are a table of sentences; a sentence is not wrapped)
"""Write ``bench/data/pairs_holdout5.jsonl``: a sixth, independent set of faithful /
corrupted answer pairs, written without looking at the verifier's code, its
documentation, or the rows of the five earlier sets (``pairs.jsonl``,
``pairs_holdout.jsonl`` … ``pairs_holdout4.jsonl``). Nobody develops the verifier
against it: it gives an honest figure of how general the verifier's rules are.

The rows have the fields of ``pairs.jsonl`` (see ``pairs.py``). The passages come from
sources no earlier set uses: three COVID-QA papers (a receptor for hepatitis B virus, a
statistics-based epidemic forecast, the case against a laboratory origin of SARS-CoV-2),
twelve ClapNQ records (Wikipedia passages on art, medicine, law, film, cooking, economics,
music, television and mining), four Rust book chapters (installing binaries, editions,
reference cycles, macros) and five topics of Python's reference (format strings, basic
customization, await, callable types, type and code objects). Each pair names its source
(``cv:`` a COVID-QA ``document_id``, ``cq:`` a ClapNQ record id, ``rb:`` a Rust book
chapter file, ``py:`` a topic of ``pydoc_data.topics``) and one phrase per evidence
object; the one paragraph of the source holding the phrase is the excerpt, read by
``holdout_build``, so the evidence is verbatim.

Faithful answers: about half copied word for word (a whole sentence of the passage, or an
exact span: a name, number, date, identifier or title), the rest as a model writes them
(light paraphrase, "No. …" / "Yes. …", two-sentence answers, claim-lattice rows with
``[E1]`` pointers). Corruptions are one minimal adversarial edit that makes the answer
wrong while keeping most of its words, of every kind in ``LATER_CORRUPTIONS``, weighted
to the hard ones: a wrong bare name, number or date that the evidence also holds nearby,
two roles swapped inside one sentence, a wrong combination of two facts the evidence
states separately, a title cut short, a reversed direction, a unit or scale change, a
scope edit (may → is, typically → always, most → all), a dropped or added negation.

Run from the repository root: ``python bench/data/build_pairs_holdout5.py [--data DIR]``
(the mechanism, and the Python it must run on, are in ``holdout_build.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from holdout_build import CL, LATER_CORRUPTIONS, Pair, PairSet, main

HBV = "cv:1552"
SIR = "cv:2458"
LAB = "cv:2459"
DADA = "cq:7663406429430503589"
INSULIN = "cq:6560700610521845615"
JURY = "cq:-2088358219848335172"
JOSHI = "cq:-5352303832848103685"
HAVEN = "cq:-3135281716449062067"
BLIND = "cq:5940116972435933830"
TAX = "cq:-2861764028778158728"
PETTY = "cq:2465071880314423467"
ANTHEM = "cq:-995491656588177102"
IDOL = "cq:-2971066805564800926"
MINING = "cq:-2041797756397877903"
QOL = "cq:-5564082149455239127"
INSTALL = "rb:ch14-04-installing-binaries.md"
EDITIONS = "rb:appendix-05-editions.md"
CYCLES = "rb:ch15-06-reference-cycles.md"
MACROS = "rb:ch20-05-macros.md"
FMT = "py:formatstrings"
AWAIT = "py:await"
CALL = "py:callable-types"
TYPEOBJ = "py:bltin-type-objects"
CODE = "py:bltin-code-objects"
CUST = "py:customization"

PAIRS: list[Pair] = [
    # --- COVID-QA: a receptor for hepatitis B virus (cv:1552)
    Pair("h5-hbv-01", HBV, ("they identified one cellular protein, NTCP",), "Which membrane protein did Yan et al. end up identifying as the likely HBV receptor?", "NTCP (sodium taurocholate cotransporting peptide)", "The preS1 peptide", "bare_name"),
    Pair("h5-hbv-02", HBV, ("amino acids 1-47", "first 2-47 amino acid peptide"), "Which stretch of preS1 did the team engineer for cross-linking?", "They engineered the first 2-47 amino acid peptide from PreS1.", "They engineered the first 1-47 amino acid peptide from PreS1.", "changed_number"),
    Pair("h5-hbv-03", HBV, ("they adopted the Tupaia hepatocytes",), "Why weren't human liver cells used for the cross-linking experiments?", "In order to obtain sufficient materials after cross-linking, they adopted the Tupaia hepatocytes, instead of human hepatocytes, for the experiments.", "In order to obtain sufficient materials after cross-linking, they adopted the human hepatocytes, instead of Tupaia hepatocytes, for the experiments.", "role_swap"),
    Pair("h5-hbv-04", HBV, ("2-4-fold increase of viral RNA",), "By how much did viral RNA and DNA go up after infecting the NTCP cell line?", "A 2-4-fold increase, measured by real-time PCR.", "A 2-4-log increase, measured by real-time PCR.", "unit_or_scale"),
    Pair("h5-hbv-05", HBV, ("NTCP itself is not sufficient",), "Is NTCP alone enough to let HBV infect a cell?", "No. NTCP itself is not sufficient to allow HBV infection, as the majority of HepaRG cells were found to express NPCT but not to be infected.", "Yes. NTCP itself is sufficient to allow HBV infection, as the majority of HepaRG cells were found to express NPCT but not to be infected.", "dropped_negation"),
    Pair("h5-hbv-06", HBV, ("which mediates bile acid transport",), "What is NTCP's normal job in liver cells?", "It is a transmembrane protein of hepatocytes that mediates bile acid transport.", "It is a transmembrane protein of hepatocytes that mediates cholesterol transport.", "swapped_entity"),
    Pair("h5-hbv-07", HBV, ("a stretch of 10 amino acids",), "How long is the NTCP motif that binds the PreS1 peptide?", "10 amino acids", "12 amino acids", "changed_number"),
    Pair("h5-hbv-08", HBV, ("--- the identification of sodium taurocholate",), "What is the title of this commentary?", '"One step closer to an experimental infection system for Hepatitis B Virus? --- the identification of sodium taurocholate cotransporting peptide as a viral receptor"', '"One step closer to an experimental infection system for Hepatitis B Virus?"', "title_fragment"),
    Pair("h5-hbv-09", HBV, ("may be the only serious contender",), "Has a high-affinity membrane partner for HBV been found?", "Not for HBV itself: the high affinity membrane partners for HBV remain elusive; the carboxypeptidase D found for duck hepatitis B virus may be the only serious contender.", "Yes: the carboxypeptidase D found for duck hepatitis B virus is the high affinity membrane partner for HBV.", "scope"),
    Pair("h5-hbv-10", HBV, ("at a nanomolar concentration",), "What does the myristoylated peptide do?", "The myristoylated peptide is shown to effectively block HBV infection in primary human hepatocytes and in the human hepatocytechimera mouse at a nanomolar concentration [E1]", "The myristoylated peptide is shown to effectively block HBV infection in primary human hepatocytes and in the human hepatocytechimera mouse at a micromolar concentration [E1]", "unit_or_scale", CL),
    # --- COVID-QA: statistics-based predictions for mainland China (cv:2458)
    Pair("h5-sir-01", SIR, ("susceptible-exposed-infectious-recovered (SEIR) model", "we use the known SIR model"), "Which epidemic model does this study rely on?", "The SIR model", "The SEIR model", "bare_name"),
    Pair("h5-sir-02", SIR, ("from January 16 to February 9, 2020. The numbers",), "Which dates' data went into the calculations?", "The data for the period from January 16 to February 9, 2020.", "The data for the period from January 16 to February 15, 2020.", "changed_number"),
    Pair("h5-sir-03", SIR, ("has added 12289 new cases",), "How many clinically diagnosed cases were added on February 12, 2020?", "12289 new cases", "12829 new cases", "changed_number"),
    Pair("h5-sir-04", SIR, ("which occurred in Chernivtsi",), "Where had these methods been applied before?", "To a children disease which occurred in Chernivtsi (Ukraine) in 1988-1989.", "To a children disease which occurred in Chernivtsi (Ukraine) in 1998-1999.", "changed_number"),
    Pair("h5-sir-05", SIR, ("Let us denote the \"clinically diagnosed cases\" as Qj",), "What do the symbols Wj and Qj stand for?", 'Wj denotes the "tested confirmed cases" and Qj the "clinically diagnosed cases".', 'Wj denotes the "clinically diagnosed cases" and Qj the "tested confirmed cases".', "role_swap"),
    Pair("h5-sir-06", SIR, ("are no longer relevant. To have better predictions",), "Can the predictions shown in Fig. 2 still be relied on?", "No. Since the difference between Wj and Vj is very big, the predictions shown in Fig. 2 are no longer relevant.", "Yes. Since the difference between Wj and Vj is very big, the predictions shown in Fig. 2 are still relevant.", "dropped_negation"),
    Pair("h5-sir-07", SIR, ("may be especially difficult if reliable data are limited",), "Why not use a more complicated model?", "Complicated models need more effort for unknown parameters identification, and this may be especially difficult if reliable data are limited.", "Complicated models need more effort for unknown parameters identification, and this is always impossible if reliable data are limited.", "scope"),
    Pair("h5-sir-08", SIR, ("Function I has a maximum",), "How does the number of infected persons behave over time in the model?", "Function I has a maximum and tends to zero at infinity.", "Function I has a minimum and tends to zero at infinity.", "swapped_direction"),
    Pair("h5-sir-09", SIR, ("We shall analyze the daily data",), "Whose daily figures does the analysis use?", "We shall analyze the daily data for the number of confirmed cases in mainland China, which origins from the National Health Commission of the People's Republic of China [E1]", "We shall analyze the daily data for the number of confirmed cases in mainland China, which origins from the World Health Organization [E1]", "swapped_entity", CL),
    Pair("h5-sir-10", SIR, ("The corresponding correlation coefficient is very high",), "How good was the fit?", "The corresponding correlation coefficient is very high r = 0.997966487046645 [E1]", "The corresponding correlation coefficient is very low r = 0.997966487046645 [E1]", "swapped_direction", CL),
    # --- COVID-QA: no evidence of laboratory engineering (cv:2459)
    Pair("h5-lab-01", LAB, ("has ∼80% identity with SARS-CoV",), "How close is SARS-CoV-2 to SARS-CoV and to bat coronaviruses?", "About 80% identity with SARS-CoV; it is most similar to some bat beta-coronaviruses, the highest being over 96% identity.", "About 96% identity with SARS-CoV; it is most similar to some bat beta-coronaviruses, the highest being over 80% identity.", "role_swap"),
    Pair("h5-lab-02", LAB, ("with a total of 202 single-nucleotide",), "How many nucleotide differences are there between human SARS-CoV-2 and bat RaTG13?", "Greater than 1,100 nt differences.", "202 single-nucleotide variations.", "wrong_combination"),
    Pair("h5-lab-03", LAB, ("After 15 passages in mice",), "After how many passages in mice did the SARS-CoV gain elevated replication?", "15", "six", "changed_number"),
    Pair("h5-lab-04", LAB, ("Dr. Feng Gao",), "Who led the rebuttal of the HIV-insertion claim?", "An HIV-1 virologist, Dr. Feng Gao.", "An HIV-1 virologist, Dr. Susan Weiss.", "bare_name"),
    Pair("h5-lab-05", LAB, ("have already withdrawn this report",), "Is the BioRxiv manuscript claiming HIV sequences still up?", "No. Because of the many concerns raised by the international community, the authors who made the initial claim have already withdrawn this report.", "Yes. Because of the many concerns raised by the international community, the authors who made the initial claim have not withdrawn this report.", "added_negation"),
    Pair("h5-lab-06", LAB, ("it is highly unlikely that RaTG13 CoV",), "Could RaTG13 be where SARS-CoV-2 came from directly?", "No. It is highly unlikely that RaTG13 CoV is the immediate source of SARS-CoV-2.", "Yes. It is highly likely that RaTG13 CoV is the immediate source of SARS-CoV-2.", "dropped_negation"),
    Pair("h5-lab-07", LAB, ("pangolins might carry CoVs",), "Do pangolins carry coronaviruses close to SARS-CoV-2?", "That is speculation: pangolins might carry CoVs closely related to SARS-CoV-2, but the data to substantiate this is not yet published.", "Yes: pangolins carry CoVs closely related to SARS-CoV-2, but the data to substantiate this is not yet published.", "scope"),
    Pair("h5-lab-08", LAB, ("less virus antigen was present",), "How did SL-SHC014-MA15 infection of mouse lungs compare with SARS MA15?", "Infection was attenuated, and less virus antigen was present in the airway epithelium as compared to SARS MA15.", "Infection was attenuated, and more virus antigen was present in the airway epithelium as compared to SARS MA15.", "swapped_direction"),
    Pair("h5-lab-09", LAB, ("Date: 2020-02-26", "as of Feb. 10, 2020"), "When was this paper published?", "2020-02-26", "2020-02-10", "changed_number"),
    Pair("h5-lab-10", LAB, ("has affected greater than 40,000 people",), "How many people had the outbreak affected by Feb. 10, 2020?", "Greater than 40,000 people, and more than 1,000 killed.", "Greater than 40 million people, and more than 1,000 killed.", "unit_or_scale"),
    Pair("h5-lab-11", LAB, ("claims of the laboratory engineering of SARS-CoV-2",), "What is the article's title?", '"No credible evidence supporting claims of the laboratory engineering of SARS-CoV-2"', '"No credible evidence supporting claims"', "title_fragment"),
    Pair("h5-lab-12", LAB, ("was able to use ACE2 from humans",), "Which ACE2 could the bat SL-CoV-WIV1 use for entry?", "ACE2 from humans, civets and Chinese horseshoe bats", "ACE2 from humans and mice", "swapped_entity"),
    # --- ClapNQ
    Pair("h5-dada-01", DADA, ("Cabaret Voltaire",), "When was Dada's Zürich center at the Cabaret Voltaire active?", "Circa 1916.", "Circa 1915.", "changed_number"),
    Pair("h5-dada-02", DADA, ("New York Dada began circa 1915",), "Where did Dada start and where did it flourish later?", "It had early centers in Zürich; New York Dada began circa 1915, and after 1920 Dada flourished in Paris.", "It had early centers in Zürich; Paris Dada began circa 1915, and after 1920 Dada flourished in New York.", "role_swap"),
    Pair("h5-dada-03", DADA, ("maintained political affinities with the radical left",), "What were the Dadaists' politics?", "the radical left", "the radical right", "swapped_entity"),
    Pair("h5-ins-01", INSULIN, ("produced by beta cells of the pancreatic islets",), "Which cells make insulin?", "Beta cells of the pancreatic islets.", "Liver cells.", "bare_name"),
    Pair("h5-ins-02", INSULIN, ("strongly inhibited by high concentrations of insulin",), "What does a lot of insulin in the blood do to the liver's glucose output?", "Glucose production and secretion by the liver is strongly inhibited by high concentrations of insulin in the blood.", "Glucose production and secretion by the liver is strongly stimulated by high concentrations of insulin in the blood.", "swapped_direction"),
    Pair("h5-ins-03", INSULIN, ("Circulating insulin also affects the synthesis of proteins",), "Does insulin affect protein synthesis?", "Circulating insulin also affects the synthesis of proteins in a wide variety of tissues [E1]", "Circulating insulin also affects the synthesis of proteins in all tissues [E1]", "scope", CL),
    Pair("h5-ins-04", INSULIN, ("from Latin insula",), "What is the origin of the word insulin?", "It is from Latin insula, island.", "It is from Greek insula, island.", "swapped_entity"),
    Pair("h5-jury-01", JURY, ("Oregon requires at least 11 votes",), "How many jurors' votes does Oregon need to convict for a capital crime?", "At least 11 votes.", "All 12.", "wrong_combination"),
    Pair("h5-jury-02", JURY, ("Each requires a 10 - 2 majority",), "What majority do Oregon and Louisiana need to convict in ordinary criminal cases?", "A 10-2 majority.", "An 11-1 majority.", "changed_number"),
    Pair("h5-jury-03", JURY, ("Louisiana requires all 12",), "What do Oregon and Louisiana require for capital crimes?", "Oregon requires at least 11 votes and Louisiana requires all 12.", "Louisiana requires at least 11 votes and Oregon requires all 12.", "role_swap"),
    Pair("h5-jury-04", JURY, ("do not require unanimous verdicts in criminal cases",), "Do all US states require unanimous criminal verdicts?", "No. Currently, two states, Oregon and Louisiana, do not require unanimous verdicts in criminal cases.", "Yes. Currently, two states, Oregon and Louisiana, require unanimous verdicts in criminal cases.", "dropped_negation"),
    Pair("h5-joshi-01", JOSHI, ("Jethalal Champaklal Gada",), "Who plays Jethalal in Taarak Mehta Ka Ooltah Chashmah?", "Dilip Joshi", "Champaklal Gada", "bare_name"),
    Pair("h5-joshi-02", JOSHI, ("He acts mostly in comedy",), "In which serial is Dilip Joshi playing Jethalal?", "Taarak Mehta Ka Ooltah Chashmah", "Taarak Mehta", "title_fragment"),
    Pair("h5-haven-01", HAVEN, ("the small town of Southport",), "In which town does Katie settle in Safe Haven?", "Southport, North Carolina", "Boston", "bare_name"),
    Pair("h5-haven-02", HAVEN, ("Cobie Smulders",), "Who plays Katie's neighbor Jo?", "Cobie Smulders", "Julianne Hough", "bare_name"),
    Pair("h5-haven-03", HAVEN, ("Mimi Kirkland",), "Who plays Alex's two children?", "Josh is played by Noah Lomax and Lexie by Mimi Kirkland.", "Josh is played by Mimi Kirkland and Lexie by Noah Lomax.", "role_swap"),
    Pair("h5-blind-01", BLIND, ("in which case the crust must be fully baked",), "When does the crust have to be fully baked?", "When it will be filled with an unbaked filling, such as with pudding or cream pies.", "When the filling has a shorter bake time than the crust.", "wrong_combination"),
    Pair("h5-blind-02", BLIND, ("keep pie crust from becoming soggy",), "Does blind baking help a crust stay crisp under a wet filling?", "Yes. Blind baking is also used to keep pie crust from becoming soggy due to a wet filling.", "No. Blind baking is not used to keep pie crust from becoming soggy due to a wet filling.", "added_negation"),
    Pair("h5-tax-01", TAX, ("in particular François Quesnay",), "Who first drew attention to tax incidence?", "The French Physiocrats, in particular François Quesnay.", "The French Physiocrats, in particular Adam Smith.", "swapped_entity"),
    Pair("h5-tax-02", TAX, ("does not depend on where the revenue is collected",), "What determines who bears a tax?", "Not where the revenue is collected, but the price elasticity of demand and price elasticity of supply.", "Where the revenue is collected, not the price elasticity of demand and price elasticity of supply.", "role_swap"),
    Pair("h5-tax-03", TAX, ("falls ultimately on landowners",), "On whom, according to Quesnay, does all taxation ultimately fall?", "Landowners", "Consumers", "bare_name"),
    Pair("h5-tax-04", TAX, ("typically imposes an economic burden on both producers and consumers",), "Who is burdened when a tax is introduced?", "It typically imposes an economic burden on both producers and consumers.", "It always imposes an economic burden on both producers and consumers.", "scope"),
    Pair("h5-petty-01", PETTY, ("uttered by Nicks",), "Who actually said the phrase that became the song's title?", "Stevie Nicks", "David A. Stewart", "bare_name"),
    Pair("h5-petty-02", PETTY, ("Eagles guitarist Joe Walsh",), "Who had Nicks split up with the night before?", "Eagles guitarist Joe Walsh", "Fleetwood Mac guitarist Joe Walsh", "wrong_combination"),
    Pair("h5-petty-03", PETTY, ("He woke up at 5am",), "What time did Stewart wake up to find Nicks in his room?", "At 5am.", "At 6am.", "changed_number"),
    Pair("h5-anthem-01", ANTHEM, ("Thomas Carr of the Carr Music Store",), "Who published the words and the music together?", "Thomas Carr of the Carr Music Store in Baltimore", "Ferdinand Durang", "bare_name"),
    Pair("h5-anthem-02", ANTHEM, ("Defence of Fort M'Henry",), "What was the song's original title?", "\"Defence of Fort M'Henry\"", '"Defence of Fort"', "title_fragment"),
    Pair("h5-anthem-03", ANTHEM, ("reprinted the song in November 1814",), "When did Washington Irving reprint the song?", "November 1814", "October 1814", "changed_number"),
    Pair("h5-idol-01", IDOL, ("Katy Perry was the first judge",), "Who was the first judge ABC announced for the revival?", "Katy Perry", "Lionel Richie", "bare_name"),
    Pair("h5-idol-02", IDOL, ("Luke Bryan was the second judge",), "When was Luke Bryan announced as a judge?", "On September 24, 2017.", "On September 29, 2017.", "changed_number"),
    Pair("h5-idol-03", IDOL, ("Lionel Richie was the third and final judge",), "In what order were Luke Bryan and Lionel Richie announced?", "Luke Bryan was the second judge to be announced and Lionel Richie was the third and final judge.", "Lionel Richie was the second judge to be announced and Luke Bryan was the third and final judge.", "role_swap"),
    Pair("h5-idol-04", IDOL, ("announced that it had acquired the rights",), "Which network acquired the rights to bring American Idol back?", "ABC", "NBC", "bare_name"),
    Pair("h5-mine-01", MINING, ("accounts for only 0.3 % of its GDP",), "How big a part of Nigeria's economy is mining?", "Only 0.3 % of its GDP.", "Only 3 % of its GDP.", "unit_or_scale"),
    Pair("h5-mine-02", MINING, ("Mineral Survey of the Northern Protectorates",), "How did organized mining begin in Nigeria?", "In 1903, when the Mineral Survey of the Northern Protectorates was created by the British colonial government.", "In 1903, when the Mineral Survey of the Southern Protectorates was created by the British colonial government.", "wrong_combination"),
    Pair("h5-mine-03", MINING, ("The discovery of oil in 1956",), "Did finding oil help Nigerian mining?", "No. The discovery of oil in 1956 hurt the mineral extraction industries, as government and industry both began to focus on this new resource.", "Yes. The discovery of oil in 1956 helped the mineral extraction industries, as government and industry both began to focus on this new resource.", "swapped_direction"),
    Pair("h5-mine-04", MINING, ("Federal Minerals and Mining Act",), "Which law codifies Nigerian mining law?", "The Federal Minerals and Mining Act of 1999", "The Mining Act", "title_fragment"),
    Pair("h5-mine-05", MINING, ("a major producer of tin",), "What did Nigeria produce in quantity by the 1940s?", "Tin, columbite, and coal.", "Tin, columbite, and iron ore.", "swapped_entity"),
    Pair("h5-qol-01", QOL, ("it is harder to make objective or long - term measurements",), "Can quality of life be measured like GDP?", "Not as easily: unlike per capita GDP or standard of living, it is harder to make objective or long-term measurements of the quality of life.", "No: unlike per capita GDP or standard of living, it is impossible to make objective or long-term measurements of the quality of life.", "scope"),
    Pair("h5-qol-02", QOL, ("distinguish two aspects of personal well - being",), "Which two aspects of personal well-being do researchers distinguish?", "Emotional well-being and life evaluation.", "Emotional well-being and productivity.", "swapped_entity"),
    # --- Rust book: installing binaries with cargo install
    Pair("h5-inst-01", INSTALL, ("this directory will be $HOME/.cargo/bin",), "Where do binaries installed with cargo install end up on a default rustup setup?", "In $HOME/.cargo/bin, the installation root's bin folder.", "In $HOME/.cargo/registry, the installation root's bin folder.", "swapped_entity"),
    Pair("h5-inst-02", INSTALL, ("you can only install packages that have binary targets",), "Can I cargo install a crate that is only a library?", "No. You can only install packages that have binary targets.", "Yes. You can only install packages that have library targets.", "swapped_entity"),
    Pair("h5-inst-03", INSTALL, ("a Rust implementation of the grep tool called ripgrep", "which in the case of ripgrep is rg"), "After installing ripgrep, what command do I run?", "rg", "ripgrep", "bare_name"),
    Pair("h5-inst-04", INSTALL, ("intended to replace system packages",), "Is cargo install supposed to replace my system's package manager?", "No. It isn't intended to replace system packages; it's meant to be a convenient way for Rust developers to install tools that others have shared.", "Yes. It is intended to replace system packages; it's meant to be a convenient way for Rust developers to install tools that others have shared.", "dropped_negation"),
    # --- Rust book: editions
    Pair("h5-ed-01", EDITIONS, ("six-week release cycle",), "How often does a new Rust release come out?", "The Rust language and compiler have a six-week release cycle.", "The Rust language and compiler have a six-month release cycle.", "unit_or_scale"),
    Pair("h5-ed-02", EDITIONS, ("six-week release cycle", "Every three years or so"), "How often does the Rust team put out a new edition?", "Every three years or so.", "Every six weeks.", "wrong_combination"),
    Pair("h5-ed-03", EDITIONS, ("four Rust editions are available",), "How many editions of Rust are there?", "At the time of this writing, four Rust editions are available: Rust 2015, Rust 2018, Rust 2021, and Rust 2024 [E1]", "At the time of this writing, three Rust editions are available: Rust 2015, Rust 2018, Rust 2021, and Rust 2024 [E1]", "changed_number", CL),
    Pair("h5-ed-04", EDITIONS, ("Rust uses 2015 as the edition value", "written using Rust 2024 edition idioms"), "Which edition does the compiler assume when Cargo.toml has no edition key?", "2015", "2024", "changed_number"),
    Pair("h5-ed-05", EDITIONS, ("The opposite situation",), "My project is on Rust 2018 and a dependency is on Rust 2015. Will that build?", "Yes. The opposite situation, where your project uses Rust 2018 and a dependency uses Rust 2015, works as well.", "No. The opposite situation, where your project uses Rust 2018 and a dependency uses Rust 2015, does not work.", "added_negation"),
    Pair("h5-ed-06", EDITIONS, ("Most features will be available on all editions",), "Do I get every new feature whatever edition I'm on?", "Most features will be available on all editions; in some cases, mainly when new keywords are added, some new features might only be available in later editions.", "All features will be available on all editions, even when new keywords are added.", "scope"),
    Pair("h5-ed-07", EDITIONS, ("Edition changes only affect the way the compiler initially parses code",), "What part of compilation do edition changes touch?", "Only the way the compiler initially parses code.", "Only the way the compiler links crates together.", "swapped_entity"),
    Pair("h5-ed-08", EDITIONS, ("For more details, see The Rust Edition Guide",), "Which book explains the differences between editions?", '"The Rust Edition Guide"', '"The Rust Edition"', "title_fragment"),
    # --- Rust book: reference cycles
    Pair("h5-cyc-01", CYCLES, ("Preventing memory leaks entirely is not one of Rust",), "Does Rust guarantee my program can't leak memory?", "No. Preventing memory leaks entirely is not one of Rust's guarantees, meaning memory leaks are memory safe in Rust.", "Yes. Preventing memory leaks entirely is one of Rust's guarantees, meaning memory leaks are memory safe in Rust.", "dropped_negation"),
    Pair("h5-cyc-02", CYCLES, ("calling Rc::downgrade increases the weak_count by 1",), "Which count goes up when I call Rc::downgrade?", "Instead of increasing the strong_count by 1, calling Rc::downgrade increases the weak_count by 1.", "Instead of increasing the weak_count by 1, calling Rc::downgrade increases the strong_count by 1.", "role_swap"),
    Pair("h5-cyc-03", CYCLES, ("which will return an Option<Rc<T>>",), "What type does upgrade give back on a Weak<T>?", "Option<Rc<T>>", "Weak<T>", "bare_name"),
    Pair("h5-cyc-04", CYCLES, ("one Node instance named leaf with the value 3",), "What values do the leaf and branch nodes hold in Listing 15-27?", "leaf has the value 3 and no children; branch has the value 5 and leaf as one of its children.", "leaf has the value 5 and no children; branch has the value 3 and leaf as one of its children.", "role_swap"),
    Pair("h5-cyc-05", CYCLES, ("decreases the reference count of the b Rc<List> instance",), "What happens to the b instance's reference count when Rust drops b at the end of main?", "It decreases from 2 to 1.", "It decreases from 2 to 0.", "changed_number"),
    Pair("h5-cyc-06", CYCLES, ("a child should not own its parent",), "Should a child node in the tree own its parent?", "No. A parent node should own its children, but a child should not own its parent.", "Yes. A parent node should own its children, and a child should own its parent.", "dropped_negation"),
    Pair("h5-cyc-07", CYCLES, ("only the ownership relationships affect whether or not a value can be dropped",), "With a mix of owning and non-owning references, which ones decide whether a value can be dropped?", "Only the ownership relationships affect whether or not a value can be dropped.", "Both the ownership and the non-ownership relationships affect whether or not a value can be dropped.", "scope"),
    Pair("h5-cyc-08", CYCLES, ("the program would use more memory than it needed",), "What could a reference cycle do in a larger program?", "If a more complex program allocated lots of memory in a cycle and held onto it for a long time, the program would use more memory than it needed and might overwhelm the system.", "If a more complex program allocated lots of memory in a cycle and held onto it for a long time, the program would use less memory than it needed and might overwhelm the system.", "swapped_direction"),
    Pair("h5-cyc-09", CYCLES, ("Weak references don’t express an ownership relationship",), "Do weak references own the value?", "Weak references don't express an ownership relationship, and their count doesn't affect when an Rc<T> instance is cleaned up [E1]", "Weak references express an ownership relationship, and their count doesn't affect when an Rc<T> instance is cleaned up [E1]", "dropped_negation", CL),
    # --- Rust book: macros
    Pair("h5-mac-01", MACROS, ("The three kinds of procedural macros are",), "What kinds of procedural macros are there?", "Custom derive, attribute-like, and function-like.", "Custom derive, attribute-like, and declarative.", "swapped_entity"),
    Pair("h5-mac-02", MACROS, ("The syn crate parses Rust code from a string",), "Which crate turns Rust source into a data structure you can operate on?", "syn", "quote", "bare_name"),
    Pair("h5-mac-03", MACROS, ("a custom derive procedural macro crate is called foo_derive",), "What should the custom derive macro crate for a crate named foo be called?", "foo_derive", "derive_foo", "bare_name"),
    Pair("h5-mac-04", MACROS, ("derive only works for structs and enums",), "Which can annotate a function, a derive macro or an attribute-like macro?", "An attribute-like macro: derive only works for structs and enums, while attributes can be applied to other items as well, such as functions.", "A derive macro: attributes only work for structs and enums, while derive can be applied to other items as well, such as functions.", "role_swap"),
    Pair("h5-mac-05", MACROS, ("The proc_macro crate comes with Rust",), "Do I have to add proc_macro to my Cargo.toml dependencies?", "No. The proc_macro crate comes with Rust, so it doesn't need to be added to the dependencies in Cargo.toml.", "Yes. The proc_macro crate does not come with Rust, so it needs to be added to the dependencies in Cargo.toml.", "added_negation"),
    Pair("h5-mac-06", MACROS, ("The stringify! macro used here is built into Rust",), "When does stringify! turn its expression into a string literal?", "At compile time.", "At runtime.", "swapped_entity"),
    Pair("h5-mac-07", MACROS, ("The Little Book of Rust Macros",), "What does the book suggest reading to learn to write macros?", '"The Little Book of Rust Macros", started by Daniel Keep and continued by Lukas Wirth.', '"The Little Book", started by Daniel Keep and continued by Lukas Wirth.', "title_fragment"),
    Pair("h5-mac-08", MACROS, ("started by Daniel Keep",), "Who wrote The Little Book of Rust Macros?", "It was started by Daniel Keep and continued by Lukas Wirth.", "It was started by Lukas Wirth and continued by Daniel Keep.", "role_swap"),
    # --- Python reference: format string syntax
    Pair("h5-fmt-01", FMT, ("it can be escaped by doubling",), "How do I get a literal curly brace out of str.format?", 'Escape it by doubling: "{{" and "}}".', "Escape it with a backslash.", "swapped_entity"),
    Pair("h5-fmt-02", FMT, ("Three conversion flags are currently supported",), "What do the conversion flags call?", "'!s' calls str() on the value, '!r' calls repr() and '!a' calls ascii().", "'!s' calls repr() on the value, '!r' calls str() and '!a' calls ascii().", "role_swap"),
    Pair("h5-fmt-03", FMT, ("but deeper nesting is not allowed",), "Can I nest replacement fields inside nested replacement fields of a format spec?", "No. Nested replacement fields may contain a field name, conversion flag and format specification, but deeper nesting is not allowed.", "Yes. Nested replacement fields may contain a field name, conversion flag and format specification, and deeper nesting is allowed.", "dropped_negation"),
    Pair("h5-fmt-04", FMT, ("an empty format specification produces the same result",), "What does an empty format specification give?", 'The same result as if you had called "str()" on the value.', 'The same result as if you had called "repr()" on the value.', "swapped_entity"),
    Pair("h5-fmt-05", FMT, ("underscores will be inserted every 4 digits",), "With the '_' option and hex output, how often are underscores inserted?", "Every 4 digits.", "Every 3 digits.", "changed_number"),
    Pair("h5-fmt-06", FMT, ("adds the respective prefix",), "Which prefix does '#' add for octal output?", "'0o'", "'0x'", "bare_name"),
    Pair("h5-fmt-07", FMT, ("but it is less sophisticated",), "How does the str.format() syntax compare with f-strings?", "It is related to that of formatted string literals, but it is less sophisticated and, in particular, does not support arbitrary expressions.", "It is related to that of formatted string literals, but it is more sophisticated and, in particular, does not support arbitrary expressions.", "swapped_direction"),
    Pair("h5-fmt-08", FMT, ("Changed in version 3.1: The positional argument specifiers", "no longer affects the default alignment for strings"), "Since which Python version can the positional argument specifiers be left out in str.format()?", "3.1", "3.10", "changed_number"),
    Pair("h5-fmt-09", FMT, ("coerces negative zero floating-point values",), "What is the 'z' option for?", "It coerces negative zero floating-point values to positive zero after rounding to the format precision; it is only valid for floating-point presentation types.", "It coerces negative zero floating-point values to positive zero after rounding to the format precision; it is valid for all presentation types.", "scope"),
    Pair("h5-fmt-10", FMT, ("or before and after the decimal point for presentation types",), "What does the precision count for 'f' versus 'g'?", "For 'f' and 'F' it is how many digits are displayed after the decimal point; for 'g' or 'G' before and after the decimal point.", "For 'g' and 'G' it is how many digits are displayed after the decimal point; for 'f' or 'F' before and after the decimal point.", "role_swap"),
    Pair("h5-fmt-11", FMT, ("Three conversion flags are currently supported",), "How many conversion flags does the format syntax support?", "Three conversion flags are currently supported [E1]", "Four conversion flags are currently supported [E1]", "changed_number", CL),
    # --- Python reference: small topics
    Pair("h5-await-01", AWAIT, ("Can only be used inside a",), "Where may I use await?", "Only inside a coroutine function.", "Only inside a generator function.", "swapped_entity"),
    Pair("h5-call-01", CALL, ("roughly translates to",), "What does calling an instance x(arg1, arg2, ...) turn into when __call__ is defined?", 'It roughly translates to "type(x).__call__(x, arg1, ...)".', 'It roughly translates to "x.__call__(type(x), arg1, ...)".', "role_swap"),
    Pair("h5-tobj-01", TYPEOBJ, ("defines names for all standard built-in types",), "Which standard module names all the built-in types?", "types", "type", "bare_name"),
    Pair("h5-tobj-02", TYPEOBJ, ("There are no special operations on types",), "Do type objects support any special operations?", "No. There are no special operations on types.", "Yes. There are special operations on types.", "dropped_negation"),
    Pair("h5-code-01", CODE, ("Code objects are returned by the built- in",), "Where do code objects come from?", "Code objects are returned by the built- in compile() function and can be extracted from function objects through their __code__ attribute [E1]", "Code objects are returned by the built- in eval() function and can be extracted from function objects through their __code__ attribute [E1]", "swapped_entity", CL),
    Pair("h5-code-02", CODE, ("global execution environment",), "How do code objects differ from function objects?", "They don't contain a reference to their global execution environment.", "They contain a reference to their global execution environment.", "dropped_negation"),
    # --- Python reference: basic customization
    Pair("h5-cust-01", CUST, ("is invoked during object construction and it returns an instance",), "If __new__ returns an instance of cls during construction, does __init__ run?", "Yes: the new instance's __init__() method will be invoked like __init__(self[, ...]).", "No: the new instance's __init__() method will not be invoked.", "added_negation"),
    Pair("h5-cust-02", CUST, ("intended mainly to allow subclasses of immutable types",), "What is __new__ mainly meant for?", "To allow subclasses of immutable types (like int, str, or tuple) to customize instance creation.", "To allow subclasses of mutable types (like int, str, or tuple) to customize instance creation.", "swapped_entity"),
    Pair("h5-cust-03", CUST, ("the current *CPython* implementation only calls it once",), "How many times does CPython call __del__ on a resurrected object?", "Only once.", "Twice.", "changed_number"),
    Pair("h5-cust-04", CUST, ("This is typically 8 bytes on 64-bit builds",), "To what size does hash() truncate a custom __hash__ value on 64-bit builds?", "The size of a Py_ssize_t, typically 8 bytes.", "The size of a Py_ssize_t, typically 8 bits.", "unit_or_scale"),
    Pair("h5-cust-05", CUST, ("will have its \"__hash__()\" implicitly set to \"None\"",), "What happens to __hash__ when a class overrides __eq__ and doesn't define __hash__?", 'Its "__hash__()" is implicitly set to "None".', "Its \"__hash__()\" is implicitly inherited from object.", "swapped_entity"),
    Pair("h5-cust-06", CUST, ("all its instances are considered true",), "How are instances treated in a boolean context if the class has neither __len__ nor __bool__?", "All its instances are considered true.", "All its instances are considered false.", "swapped_direction"),
    Pair("h5-cust-07", CUST, ("are each other’s reflection",), "Which method is the reflection of __lt__()?", "__gt__()", "__le__()", "bare_name"),
    Pair("h5-cust-08", CUST, ("a warning is printed to",), "What happens to an exception raised inside __del__?", 'It is ignored, and a warning is printed to "sys.stderr" instead.', 'It is ignored, and a warning is printed to "sys.stdout" instead.', "swapped_entity"),
    Pair("h5-cust-09", CUST, ("If at all possible, this should look like a valid Python expression",), "Must __repr__ return a valid Python expression?", "Not always: if at all possible it should look like a valid Python expression that could be used to recreate an object with the same value; if not, a string of the form <...some useful description...> should be returned.", "Yes: it must always look like a valid Python expression that could be used to recreate an object with the same value.", "scope"),
    Pair("h5-cust-10", CUST, ("By convention, \"False\" and \"True\" are returned",), "What do rich comparison methods return on success?", "By convention, False and True are returned for a successful comparison [E1]", "By convention, NotImplemented is returned for a successful comparison [E1]", "swapped_entity", CL),
    Pair("h5-cust-11", CUST, ("It is not guaranteed that",), "Will __del__ be called for objects still alive when the interpreter exits?", "Not necessarily: it is not guaranteed that __del__() methods are called for objects that still exist when the interpreter exits.", "Yes: it is guaranteed that __del__() methods are called for objects that still exist when the interpreter exits.", "dropped_negation"),
    # --- added for the hard kinds
    Pair("h5-haven-04", HAVEN, ("Alex Wheatley ( Josh Duhamel )",), "Who plays the widowed father who runs the general store?", "Josh Duhamel", "Noah Lomax", "wrong_combination"),
    Pair("h5-ins-05", INSULIN, ("converted into either glycogen via glycogenesis",), "By which process is the absorbed glucose turned into glycogen?", "Via glycogenesis.", "Via lipogenesis.", "wrong_combination"),
    Pair("h5-idol-05", IDOL, ("Ryan Seacrest would be returning as the host",), "When was it announced that Ryan Seacrest would host the revival?", "On July 20, 2017.", "On May 16, 2017.", "wrong_combination"),
    Pair("h5-sir-11", SIR, ("Information about the open-access article",), "What is the title of Nesteruk's article?", '"Statistics-Based Predictions of Coronavirus Epidemic Spreading in Mainland China"', '"Statistics-Based Predictions of Coronavirus Epidemic Spreading"', "title_fragment"),
    Pair("h5-petty-04", PETTY, ("On The Howard Stern Show",), "On which programme did Stewart explain where the title came from?", '"The Howard Stern Show"', '"The Stern Show"', "title_fragment"),
    Pair("h5-fmt-12", FMT, ("it is possible to insert a curly brace with a nested replacement field",), "Is there any way to get a curly brace as the fill in str.format()?", "Yes: it is not possible as a literal fill character, but it is possible to insert a curly brace with a nested replacement field.", "No: it is not possible as a literal fill character, and it is not possible to insert a curly brace with a nested replacement field either.", "added_negation"),
]  # fmt: skip

SET = PairSet(
    Path(__file__).with_name("pairs_holdout5.jsonl"), PAIRS, LATER_CORRUPTIONS, title_heading="#"
)

if __name__ == "__main__":
    raise SystemExit(main(SET, __doc__))
