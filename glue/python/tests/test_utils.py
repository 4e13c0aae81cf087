"""getResolvedOptions against Glue's documented behaviour."""

import unittest

from awsglue.utils import GlueArgumentError, getResolvedOptions


class GetResolvedOptions(unittest.TestCase):
    def test_table(self):
        cases = [
            # (argv, names, want subset or error text)
            (["s.py", "--JOB_NAME", "sales"], ["JOB_NAME"], {"JOB_NAME": "sales"}),
            (["s.py", "--JOB_NAME=sales"], ["JOB_NAME"], {"JOB_NAME": "sales"}),
            (["s.py", "--JOB_NAME", "a", "--JOB_NAME", "b"], ["JOB_NAME"], {"JOB_NAME": "b"}),
            (["s.py", "--JOB_NAME", "sales", "--unknown", "x", "--flag"], ["JOB_NAME"], {"JOB_NAME": "sales"}),
            (["s.py", "--day", "2026-12-01", "--JOB_NAME", "j"], ["JOB_NAME", "day"], {"JOB_NAME": "j", "day": "2026-12-01"}),
            (["s.py"], ["JOB_NAME"], "the following arguments are required: --JOB_NAME"),
            (["s.py", "--JOB_NAME"], ["JOB_NAME"], "the following arguments are required: --JOB_NAME"),
            (["s.py", "--a", "1"], ["a", "b", "c"], "the following arguments are required: --b, --c"),
            (["s.py", "--JOB_NAME", "j"], ["JOB_NAME"], {"job_bookmark_option": "job-bookmark-disable",
                                                         "job_bookmark_from": None, "job_bookmark_to": None}),
            (["s.py", "--JOB_NAME", "j", "--job-bookmark-option", "job-bookmark-enable"], ["JOB_NAME"],
             {"job_bookmark_option": "job-bookmark-enable"}),
            (["s.py", "--JOB_NAME", "j", "--job-bookmark-option", "enable"], ["JOB_NAME"], "invalid choice: 'enable'"),
            (["s.py", "--JOB_NAME", "j", "--job-bookmark-option", "job-bookmark-pause", "--job-bookmark-from", "r1",
              "--job-bookmark-to", "r2"], ["JOB_NAME"],
             {"job_bookmark_option": "job-bookmark-pause", "job_bookmark_from": "r1", "job_bookmark_to": "r2"}),
            (["s.py", "--JOB_NAME", "j", "--job-bookmark-from", "r1", "--job-bookmark-to", "r2"], ["JOB_NAME"],
             "only allowed with --job-bookmark-option job-bookmark-pause"),
            (["s.py", "--JOB_NAME", "j", "--job-bookmark-option", "job-bookmark-pause", "--job-bookmark-from", "r1"],
             ["JOB_NAME"], "go together"),
            (["s.py", "--JOB_NAME", "j"], ["--JOB_NAME"], "without '--'"),
            # Spellings Glue would ignore, running with job-bookmark-disable:
            # refused rather than read everything again.
            (["s.py", "--JOB_NAME", "j", "--job_bookmark_option", "job-bookmark-enable"], ["JOB_NAME"],
             "write --job-bookmark-option"),
            (["s.py", "--JOB_NAME", "j", "--job-bookmark-option"], ["JOB_NAME"],
             "argument --job-bookmark-option: expected one argument"),
            (["s.py", "--JOB_NAME", "j", "--job-bookmark-option", "job-bookmark-pause", "--job_bookmark_from", "r1",
              "--job_bookmark_to", "r2"], ["JOB_NAME"], "write --job-bookmark-from"),
        ]
        for argv, names, want in cases:
            with self.subTest(argv=argv, names=names):
                if isinstance(want, str):
                    with self.assertRaises(GlueArgumentError) as cm:
                        getResolvedOptions(argv, names)
                    self.assertIn(want, str(cm.exception))
                    continue
                got = getResolvedOptions(argv, names)
                for k, v in want.items():
                    self.assertIn(k, got)
                    self.assertEqual(got[k], v, "key %s" % k)
                self.assertNotIn("unknown", got)


if __name__ == "__main__":
    unittest.main()


class JobInitOptions(unittest.TestCase):
    """Job.init reads the bookmark option from argv when the script did not
    resolve it: the same spellings are refused there."""

    def test_refused(self):
        from awsglue.utils import _bookmark_options, _parse

        for argv in (["s.py", "--job_bookmark_option", "job-bookmark-enable"], ["s.py", "--job-bookmark-option"]):
            with self.subTest(argv=argv):
                with self.assertRaises(GlueArgumentError):
                    _bookmark_options(_parse(argv))
        self.assertEqual(_bookmark_options(_parse(["s.py", "--job-bookmark-option", "job-bookmark-enable"])),
                         ("job-bookmark-enable", None, None))
