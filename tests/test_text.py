from casemill.text import count


def test_count_reads_singular_for_one_only():
    assert count(1, "case") == "1 case"
    assert count(0, "case") == "0 cases"
    assert count(1870, "case") == "1,870 cases"
    assert count(2, "log file") == "2 log files"
    assert count(3, "summary", "summaries") == "3 summaries"
