//! Names that need no declaration: the Python standard library (Python
//! 3.11 `sys.stdlib_module_names`, generated once and pasted), Node built-in
//! modules (Node 20 `require('module').builtinModules`), and the import names
//! of Python distributions whose import name differs from the distribution
//! name.

/// Python 3.11 `sys.stdlib_module_names`.
#[rustfmt::skip]
pub(crate) const PYTHON_STDLIB: &[&str] = &[
    "__future__", "_abc", "_aix_support", "_ast", "_asyncio", "_bisect", "_blake2",
    "_bootsubprocess", "_bz2", "_codecs", "_codecs_cn", "_codecs_hk", "_codecs_iso2022",
    "_codecs_jp", "_codecs_kr", "_codecs_tw", "_collections", "_collections_abc", "_compat_pickle",
    "_compression", "_contextvars", "_crypt", "_csv", "_ctypes", "_curses", "_curses_panel",
    "_datetime", "_dbm", "_decimal", "_elementtree", "_frozen_importlib",
    "_frozen_importlib_external", "_functools", "_gdbm", "_hashlib", "_heapq", "_imp", "_io",
    "_json", "_locale", "_lsprof", "_lzma", "_markupbase", "_md5", "_msi", "_multibytecodec",
    "_multiprocessing", "_opcode", "_operator", "_osx_support", "_overlapped", "_pickle",
    "_posixshmem", "_posixsubprocess", "_py_abc", "_pydecimal", "_pyio", "_queue", "_random",
    "_scproxy", "_sha1", "_sha256", "_sha3", "_sha512", "_signal", "_sitebuiltins", "_socket",
    "_sqlite3", "_sre", "_ssl", "_stat", "_statistics", "_string", "_strptime", "_struct",
    "_symtable", "_thread", "_threading_local", "_tkinter", "_tokenize", "_tracemalloc", "_typing",
    "_uuid", "_warnings", "_weakref", "_weakrefset", "_winapi", "_zoneinfo", "abc", "aifc",
    "antigravity", "argparse", "array", "ast", "asynchat", "asyncio", "asyncore", "atexit",
    "audioop", "base64", "bdb", "binascii", "bisect", "builtins", "bz2", "cProfile", "calendar",
    "cgi", "cgitb", "chunk", "cmath", "cmd", "code", "codecs", "codeop", "collections", "colorsys",
    "compileall", "concurrent", "configparser", "contextlib", "contextvars", "copy", "copyreg",
    "crypt", "csv", "ctypes", "curses", "dataclasses", "datetime", "dbm", "decimal", "difflib",
    "dis", "distutils", "doctest", "email", "encodings", "ensurepip", "enum", "errno",
    "faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib", "functools",
    "gc", "genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip",
    "hashlib", "heapq", "hmac", "html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib",
    "inspect", "io", "ipaddress", "itertools", "json", "keyword", "lib2to3", "linecache", "locale",
    "logging", "lzma", "mailbox", "mailcap", "marshal", "math", "mimetypes", "mmap", "modulefinder",
    "msilib", "msvcrt", "multiprocessing", "netrc", "nis", "nntplib", "nt", "ntpath", "nturl2path",
    "numbers", "opcode", "operator", "optparse", "os", "ossaudiodev", "pathlib", "pdb", "pickle",
    "pickletools", "pipes", "pkgutil", "platform", "plistlib", "poplib", "posix", "posixpath",
    "pprint", "profile", "pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc", "pydoc_data",
    "pyexpat", "queue", "quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter",
    "runpy", "sched", "secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal",
    "site", "smtpd", "smtplib", "sndhdr", "socket", "socketserver", "spwd", "sqlite3",
    "sre_compile", "sre_constants", "sre_parse", "ssl", "stat", "statistics", "string",
    "stringprep", "struct", "subprocess", "sunau", "symtable", "sys", "sysconfig", "syslog",
    "tabnanny", "tarfile", "telnetlib", "tempfile", "termios", "textwrap", "this", "threading",
    "time", "timeit", "tkinter", "token", "tokenize", "tomllib", "trace", "traceback",
    "tracemalloc", "tty", "turtle", "turtledemo", "types", "typing", "unicodedata", "unittest",
    "urllib", "uu", "uuid", "venv", "warnings", "wave", "weakref", "webbrowser", "winreg",
    "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "zipapp", "zipfile", "zipimport", "zlib",
    "zoneinfo",
];

/// Node 20 `require('module').builtinModules` (the `node:`-only ones such as
/// `node:test` are accepted by their prefix).
#[rustfmt::skip]
pub(crate) const NODE_BUILTINS: &[&str] = &[
    "_http_agent", "_http_client", "_http_common", "_http_incoming", "_http_outgoing",
    "_http_server", "_stream_duplex", "_stream_passthrough", "_stream_readable",
    "_stream_transform", "_stream_wrap", "_stream_writable", "_tls_common", "_tls_wrap", "assert",
    "assert/strict", "async_hooks", "buffer", "child_process", "cluster", "console", "constants",
    "crypto", "dgram", "diagnostics_channel", "dns", "dns/promises", "domain", "events", "fs",
    "fs/promises", "http", "http2", "https", "inspector", "inspector/promises", "module", "net",
    "os", "path", "path/posix", "path/win32", "perf_hooks", "process", "punycode", "querystring",
    "readline", "readline/promises", "repl", "stream", "stream/consumers", "stream/promises",
    "stream/web", "string_decoder", "sys", "timers", "timers/promises", "tls", "trace_events",
    "tty", "url", "util", "util/types", "v8", "vm", "wasi", "worker_threads", "zlib",
];

/// Python distribution (normalised: lowercase, `-`/`.` → `_`) → the
/// top-level import names it provides, where they differ.
#[rustfmt::skip]
pub(crate) const PYTHON_IMPORT_NAMES: &[(&str, &[&str])] = &[
    ("pyyaml", &["yaml", "_yaml"]), ("pillow", &["pil"]), ("scikit_learn", &["sklearn"]),
    ("scikit_image", &["skimage"]), ("beautifulsoup4", &["bs4"]), ("opencv_python", &["cv2"]),
    ("opencv_python_headless", &["cv2"]), ("opencv_contrib_python", &["cv2"]),
    ("python_dateutil", &["dateutil"]), ("python_dotenv", &["dotenv"]), ("python_jose", &["jose"]),
    ("python_multipart", &["multipart", "python_multipart"]), ("python_slugify", &["slugify"]),
    ("python_magic", &["magic"]), ("python_docx", &["docx"]), ("python_pptx", &["pptx"]),
    ("python_json_logger", &["pythonjsonlogger"]), ("pyjwt", &["jwt"]), ("pyserial", &["serial"]),
    ("pyusb", &["usb"]), ("pyzmq", &["zmq"]), ("pyopenssl", &["openssl"]),
    ("pycryptodome", &["crypto"]), ("pycryptodomex", &["cryptodome"]), ("gitpython", &["git"]),
    ("mysqlclient", &["mysqldb"]), ("mysql_connector_python", &["mysql"]),
    ("psycopg2_binary", &["psycopg2"]), ("psycopg_binary", &["psycopg"]), ("setuptools", &["setuptools", "pkg_resources", "_distutils_hack"]), ("pytest", &["pytest", "_pytest"]),
    ("attrs", &["attr", "attrs"]), ("protobuf", &["google"]), ("grpcio", &["grpc"]),
    ("grpcio_tools", &["grpc_tools"]), ("pymupdf", &["fitz", "pymupdf"]),
    ("pywin32", &["win32api", "win32con", "win32gui", "pywintypes", "win32com"]),
    ("msgpack_python", &["msgpack"]), ("typing_extensions", &["typing_extensions"]),
    ("google_api_python_client", &["googleapiclient"]), ("google_auth", &["google"]),
    ("ruamel_yaml", &["ruamel"]), ("discord_py", &["discord"]),
    ("websocket_client", &["websocket"]), ("dnspython", &["dns"]), ("pyside6", &["pyside6"]),
    ("pyqt5", &["pyqt5"]), ("faiss_cpu", &["faiss"]), ("faiss_gpu", &["faiss"]),
    ("tensorflow_gpu", &["tensorflow"]), ("torchvision", &["torchvision"]),
    ("apache_airflow", &["airflow"]), ("azure_storage_blob", &["azure"]),
    ("pytest_asyncio", &["pytest_asyncio"]), ("pytest_mock", &["pytest_mock"]),
    ("djangorestframework", &["rest_framework"]), ("django_cors_headers", &["corsheaders"]),
    ("llama_cpp_python", &["llama_cpp"]), ("email_validator", &["email_validator"]),
    ("pydantic_settings", &["pydantic_settings"]), ("tomli_w", &["tomli_w"]),
    ("markdown", &["markdown"]), ("pyproject_hooks", &["pyproject_hooks"]),
    ("importlib_metadata", &["importlib_metadata"]), ("jinja2", &["jinja2"]),
    ("markupsafe", &["markupsafe"]), ("sqlalchemy", &["sqlalchemy"]), ("ipython", &["ipython"]),
    ("pywavelets", &["pywt"]), ("pyinstaller", &["pyinstaller"]), ("xmltodict", &["xmltodict"]),
    ("python_levenshtein", &["levenshtein"]), ("ujson", &["ujson"]),
];
