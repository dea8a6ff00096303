# src/flask_sqlalchemy/session.py: scoped_session scope key = id of the current Flask app context
from flask.globals import app_ctx
import sqlalchemy.orm


def _app_ctx_id():
    return id(app_ctx._get_current_object())  # corpus: sink


class ScopedRegistry:
    # sqlalchemy.util.ScopedRegistry, used by scoped_session
    def __init__(self, createfunc, scopefunc):
        self.createfunc = createfunc
        self.scopefunc = scopefunc
        self.registry = {}

    def __call__(self):
        key = self.scopefunc()
        try:
            return self.registry[key]  # corpus: sink
        except KeyError:
            return self.registry.setdefault(key, self.createfunc())  # corpus: sink

    def clear(self):
        try:
            del self.registry[self.scopefunc()]  # corpus: sink
        except KeyError:
            pass


class SQLAlchemy:
    # flask_sqlalchemy/extension.py
    def __init__(self, app=None):
        self.session = sqlalchemy.orm.scoped_session(
            sqlalchemy.orm.sessionmaker(), scopefunc=_app_ctx_id)
        if app is not None:
            self.init_app(app)

    def init_app(self, app):
        app.teardown_appcontext(self._teardown_session)

    def _teardown_session(self, exc):
        self.session.remove()
