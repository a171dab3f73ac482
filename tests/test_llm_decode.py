

def test_complete_objects_recovers_items_from_a_cut_off_answer():
    from anachron.llm.decode import complete_objects

    cut = '{"evidence": [{"id": 1, "fact": "A", "source_date": "2019-01-02"}, {"id": 2, "fact": "B {x}", "source_date": "2019-0'
    assert complete_objects(cut, ("fact", "source_date")) == [{"id": 1, "fact": "A", "source_date": "2019-01-02"}]
    assert complete_objects('{"a": {"fact": "x"}}', ("fact",)) == [{"fact": "x"}]  # the inner one, the outer lacks the key
    assert complete_objects('{"fact": "x", "n": {"fact": "y"}}', ("fact",)) == [{"fact": "x", "n": {"fact": "y"}}]
    assert complete_objects(None) == [] and complete_objects("no json {") == []
