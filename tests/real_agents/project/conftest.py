# Root conftest: puts the project root on sys.path so pytest can import `calc`.
