"""Admin for chronicles, sheets and sessions: where narrators prepare an evening.

A whole sheet (Traits, Negative Traits, Abilities) is edited on the character's
page. Names are cleaned (``characters.models.clean_name``: NFC, whitespace
collapsed, invisible characters removed). Nonsense is refused with a form error,
not an IntegrityError: a Trait without a category or with a count outside
1..99, an Ability rating outside 1..10 (model validators), a name twice on one
sheet, in any case or spacing (the formsets below), and an edit that would
break a challenge in play: deleting a Trait bid in an open challenge, lowering
its count below the copies bid, or changing its category or making it Negative
(renaming it is fine: the challenge keeps the name as bid). A character with
challenges cannot be deleted here (their history is read-only). Sessions are
started by the chronicle action, which ends the open one, so lost Traits come
back, once a confirmation page has named what ends; time out is the dashboard's.
A staff narrator who is not a superuser sees only her chronicles' objects
(``characters.admin_scope``).
"""

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import ValidationError
from django.db.models import Count, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.forms.models import BaseInlineFormSet, ModelForm
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from challenges.rules import PRESETS, RULESETS, Category, changed_options
from characters.admin_scope import NarratedOnlyAdmin, RelatedOnly
from characters.models import (
    Ability,
    Character,
    Chronicle,
    Discipline,
    GameSession,
    Immunity,
    Merit,
    Presence,
    StorySheet,
    StorySkill,
    Trait,
    Weapon,
    clean_name,
    name_key,
)
from characters.services import join_links_revoke, session_start

# The admin's own titles, in the app's name rather than the framework's.
admin.site.site_header = "Narrator administration"
admin.site.site_title = "Narrator admin"
admin.site.index_title = "Chronicles, sheets and sessions"


class UniqueNameFormSet(BaseInlineFormSet):
    """Refuse the same name twice on one sheet (any case, any spacing, any
    category: :func:`characters.models.name_key`).

    A Trait held several times is one line with a count (*Quick* ×3), never
    two lines; the database would only refuse exact duplicates, and too late.
    """

    what = "name"

    def clean(self):
        # Before super(): its exact-duplicate check would hide this clearer message.
        seen: dict[str, str] = {}
        for form in self.forms:
            if not hasattr(form, "cleaned_data") or self._should_delete_form(form):
                continue
            name = clean_name(form.cleaned_data.get("name") or "")
            if not name:
                continue
            key = name_key(name)
            if key in seen:
                form.add_error("name", f"{name} is already on this sheet.")
                raise ValidationError(
                    f"{self.what} {seen[key]} appears twice on this sheet; "
                    "keep one line (and raise its count)."
                )
            seen[key] = name
        super().clean()


class TraitFormSet(UniqueNameFormSet):
    """Traits of one sheet: unique names; counts and categories are checked per
    form; a Trait bid in an open challenge keeps its copies bid, its category
    and stays positive until the challenge is over
    (``challenges.services.trait_edit_refusal``)."""

    what = "Trait"

    def clean(self):
        super().clean()
        refusals = []
        for form in self.initial_forms:
            if not hasattr(form, "cleaned_data") or not form.has_changed():
                continue
            refusal = self._refusal(form)
            if refusal:
                form.add_error(None, refusal)
                refusals.append(refusal)
        if refusals:
            raise ValidationError(refusals)

    def _refusal(self, form) -> str:
        from challenges.services import trait_edit_refusal

        data = form.cleaned_data
        if self._should_delete_form(form) or data.get("negative"):
            return trait_edit_refusal(form.instance.pk)
        if "count" not in form.changed_data and "category" not in form.changed_data:
            return ""
        return trait_edit_refusal(
            form.instance.pk, count=data.get("count") or 0, category=data.get("category")
        )


class AbilityFormSet(UniqueNameFormSet):
    """Abilities of one sheet: unique names."""

    what = "Ability"


class TraitInline(admin.TabularInline):
    """Traits and Negative Traits of a sheet, one line each with its count."""

    model = Trait
    formset = TraitFormSet
    fields = ["name", "category", "count", "negative", "stamina"]
    extra = 1


class AbilityInline(admin.TabularInline):
    """Abilities of a sheet with their ratings."""

    model = Ability
    formset = AbilityFormSet
    fields = ["name", "rating"]
    extra = 1


class SkillFormSet(UniqueNameFormSet):
    """Skills of one test-pool sheet: unique names (ratings: ``Ability.clean``)."""

    what = "Skill"


class SkillInline(AbilityInline):
    """A test-pool sheet's Skills (``bns``: Brawl, Melee, Firearms, Dodge…),
    kept as Abilities with their ratings, 1 to 5 (a Skill rated 0 is left off)."""

    formset = SkillFormSet
    verbose_name = "Skill"
    verbose_name_plural = "Skills"


class DisciplineFormSet(UniqueNameFormSet):
    """Disciplines of one sheet: unique names."""

    what = "Discipline"


class DisciplineInline(admin.TabularInline):
    """Disciplines of a sheet with their ratings (ukm: Discipline retests)."""

    model = Discipline
    formset = DisciplineFormSet
    fields = ["name", "rating"]
    extra = 0


class WeaponFormSet(UniqueNameFormSet):
    """Weapons of one sheet: unique names."""

    what = "Weapon"


class WeaponInline(admin.TabularInline):
    """Weapons of a sheet: bonus Traits, the Ability they need, ranged or not."""

    model = Weapon
    formset = WeaponFormSet
    fields = ["name", "bonus", "ability", "ranged"]
    extra = 0


class StorySheetInline(admin.StackedInline):
    """Issue 13: a dice-pool sheet's dots (``storytelling``, seeds/003): the
    nine Attributes by category, Health dots, Defense, Initiative modifier,
    Speed, Size, Wisdom and armor; one per character, always there."""

    model = StorySheet
    can_delete = False
    min_num = 1
    max_num = 1
    verbose_name_plural = "Storytelling sheet"
    fieldsets = [
        (
            "Attributes (1 to 5 dots)",
            {
                "fields": [
                    ("intelligence", "wits", "resolve"),
                    ("strength", "dexterity", "stamina"),
                    ("presence", "manipulation", "composure"),
                ],
                "description": "Mental, Physical, Social.",
            },
        ),
        (
            "Health, combat and Wisdom",
            {
                "fields": [
                    ("health", "defense", "initiative"),
                    ("speed", "size", "armor", "wisdom"),
                ],
                "description": (
                    "Stated as on the character's sheet: the rules here work out none of "
                    "them from Size or Attributes. Tonight's damage marks her Health boxes "
                    "(on her presence)."
                ),
            },
        ),
    ]


class StorySkillFormSet(UniqueNameFormSet):
    """Skills of one dice-pool sheet: each Skill once (dots, specialties:
    ``StorySkill.clean``)."""

    what = "Skill"


class StorySkillInline(admin.TabularInline):
    """Issue 13: a dice-pool sheet's Skills with dots (0 to 5) and specialties."""

    model = StorySkill
    formset = StorySkillFormSet
    fields = ["name", "dots", "specialties"]
    extra = 3


class MeritFormSet(UniqueNameFormSet):
    """Merits of one dice-pool sheet: unique names."""

    what = "Merit"


class MeritInline(admin.TabularInline):
    """Issue 13: a dice-pool sheet's Merits with dots (1 to 5) and a note."""

    model = Merit
    formset = MeritFormSet
    fields = ["name", "dots", "note"]
    extra = 1


NOT_USED = "—"
"""A list column her sheet kind does not use (a MET count on a sheet of dots)."""


def _category_total(category: Category) -> Coalesce:
    # A subquery, not Sum("traits__count"): searching by Trait name joins the
    # Traits again and would multiply a joined sum.
    traits = Trait.objects.filter(character=OuterRef("pk"), category=category, negative=False)
    total = traits.values("character").annotate(total=Sum("count")).values("total")
    return Coalesce(Subquery(total), 0)


@admin.register(Character)
class CharacterAdmin(NarratedOnlyAdmin, admin.ModelAdmin):
    """Characters by chronicle and player; the whole sheet on one page."""

    list_display = [
        "name",
        "chronicle",
        "run_by",
        "physical",
        "social",
        "mental",
        "health_level",
    ]
    list_filter = [("chronicle", RelatedOnly), ("player", RelatedOnly), "auto_answer"]
    list_select_related = ["chronicle", "player"]
    search_fields = ["name", "concept", "player__username", "traits__name"]
    fieldsets = [
        (None, {"fields": ["chronicle", "name", "player", "concept", "health", "notes"]}),
        (
            "Pools (refreshed by each new session)",
            {"fields": [("willpower", "rage", "gnosis", "blood"), "blood_per_turn"]},
        ),
        # s11 clocks: a Garou heals by resting; Mortal Wound episodes leave scars.
        ("Healing and battle scars", {"fields": [("garou", "battle_scars")]}),
        (
            "Run by the narrators (an NPC: no player)",
            {
                "fields": [("auto_answer", "relents")],
                "description": (
                    "A character with no player is an NPC: a narrator plays it from the "
                    "dashboard (its panel's Play button). With auto-answer on, Narrator "
                    "answers its challenges at once: it bids its best Trait in the category "
                    "(most copies left, ties by sheet order), throws at random, declares its "
                    "true count, never retests, and relents only as set below."
                ),
            },
        ),
    ]
    inlines = [TraitInline, AbilityInline, DisciplineInline, WeaponInline]
    # Issue 12: a chronicle whose ruleset has test pools (Ruleset.test_pools,
    # bns: seeds/002) rates Attributes and Skills; nothing is bid or lost, so
    # its page shows these instead of the Trait sheet's fields and inlines.
    test_pool_fieldsets = [
        (None, {"fields": ["chronicle", "name", "player", "concept", "notes"]}),
        (
            "Attributes",
            {
                "fields": [("physical_attribute", "social_attribute", "mental_attribute"), "focus"],
                "description": (
                    "Rated 1 to 15 (the app's range: the rules give none). A test pool is "
                    "an Attribute plus a Skill (Physical + Brawl) or current Willpower."
                ),
            },
        ),
        (
            "Willpower and Rage (refreshed by each new session)",
            {"fields": [("willpower", "rage")], "description": "Willpower is rated 0 to 10."},
        ),
        (
            "Wound track and combat",
            {
                "fields": [
                    ("healthy_boxes", "injured_boxes", "incapacitated_boxes"),
                    ("stock_npc", "no_knockout", "creature"),
                ],
                "description": (
                    "Damage taken tonight (on her presence) fills Healthy, then Injured, "
                    "then Incapacitated. The rules name only the Incapacitated track; "
                    "three boxes each is the app's default. A Stock NPC has no wound track. "
                    "Creature: Pierce the Heart kills a mortal, stakes a vampire."
                ),
            },
        ),
        ("Garou", {"fields": [("garou", "form")]}),
    ]
    test_pool_inlines = [SkillInline]
    # Issue 13: a chronicle whose ruleset rolls dice pools (Ruleset.dice_pools,
    # storytelling: seeds/003) rates dots; nothing is bid, no test pool added.
    dice_pool_fieldsets = [
        (None, {"fields": ["chronicle", "name", "player", "concept", "notes"]}),
        (
            "Willpower (refreshed by each new session)",
            {"fields": ["willpower"], "description": 'Rated 1 to 10 (seeds/003 "Willpower").'},
        ),
    ]
    dice_pool_inlines = [StorySheetInline, StorySkillInline, MeritInline]
    autocomplete_fields = ["player"]  # searched by name in PlayerSearchUserAdmin
    actions = ["revoke_join_links"]

    class Media:
        css = {"all": ["narrator/admin.css"]}

    def sheet_chronicle(self, request, obj=None) -> Chronicle | None:
        """The chronicle whose sheet this page edits: the one posted or asked
        for (``?chronicle=``), else ``obj``'s; None when none is known yet (a
        new character: the Trait sheet, until a chronicle with test pools is
        chosen)."""
        chosen = request.POST.get("chronicle") or request.GET.get("chronicle") or ""
        chronicle = Chronicle.objects.filter(pk=chosen).first() if chosen.isdigit() else None
        return chronicle or (obj.chronicle if obj is not None else None)

    def _sheet_rules(self, request, obj=None):
        """The ruleset of :meth:`sheet_chronicle` (None: none known, or an
        unknown ruleset: the Trait sheet), read once per request."""
        if not hasattr(request, "_narrator_sheet_rules"):
            chronicle = self.sheet_chronicle(request, obj)
            request._narrator_sheet_rules = chronicle and RULESETS.get(chronicle.ruleset)
        return request._narrator_sheet_rules

    def _test_pools(self, request, obj=None) -> bool:
        rules = self._sheet_rules(request, obj)
        return rules is not None and rules.test_pools

    def _dice_pools(self, request, obj=None) -> bool:
        rules = self._sheet_rules(request, obj)
        return rules is not None and rules.dice_pools

    def get_fieldsets(self, request, obj=None):
        if self._test_pools(request, obj):
            return self.test_pool_fieldsets
        if self._dice_pools(request, obj):
            return self.dice_pool_fieldsets
        return super().get_fieldsets(request, obj)

    def get_inlines(self, request, obj):
        if self._test_pools(request, obj):
            return self.test_pool_inlines
        if self._dice_pools(request, obj):
            return self.dice_pool_inlines
        return super().get_inlines(request, obj)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                physical_total=_category_total(Category.PHYSICAL),
                social_total=_category_total(Category.SOCIAL),
                mental_total=_category_total(Category.MENTAL),
            )
        )

    @admin.action(description="Revoke join links", permissions=["change"])
    def revoke_join_links(self, request, queryset) -> None:
        """Every one-tap join link of the selected characters' players stops
        working (and browsers logged in by one are logged out); new links work."""
        players = {c.player for c in queryset.select_related("player") if c.player is not None}
        for player in sorted(players, key=lambda p: p.get_username()):
            ended = join_links_revoke(user=player)
            self.message_user(
                request,
                f"Join links of {player.get_username()} revoked"
                + (f"; {ended} browser(s) logged out." if ended else "."),
                messages.SUCCESS,
            )
        if not players:
            self.message_user(request, "None of these characters has a player.", messages.WARNING)

    def save_related(self, request, form, formsets, change) -> None:
        """Save the sheet; then, if auto-answer was just switched on for an NPC,
        it answers what already waits on it in the open session (issue 11
        section 4), unless the session is in a time out (then at Resume)."""
        super().save_related(request, form, formsets, change)
        character = form.instance
        if self._dice_pools(request, character):
            # An unchanged sheet inline saves nothing: every dice-pool
            # character still gets her row (the defaults).
            StorySheet.objects.get_or_create(character=character)
        if change and "auto_answer" in form.changed_data and character.auto_answers:
            from challenges.services import npc_answer_session_due

            session = character.chronicle.open_session()
            if session is not None and not session.time_out:
                npc_answer_session_due(session.pk, character_id=character.pk)

    @admin.display(description="Player", ordering="player__username")
    def run_by(self, obj: Character) -> str:
        """Her player, or "NPC" (run by the narrators), "NPC · auto-answer"."""
        if obj.player is not None:
            return str(obj.player)
        return "NPC · auto-answer" if obj.auto_answer else "NPC"

    @staticmethod
    def _trait_sheet(obj: Character) -> bool:
        """Her sheet holds adjective Traits and MET health levels
        (``Ruleset.adjective_traits``; an unknown ruleset: a Trait sheet)."""
        rules = RULESETS.get(obj.chronicle.ruleset)
        return rules is None or rules.adjective_traits

    @classmethod
    def _rating(cls, obj: Character, category: Category) -> int | str:
        """Her Traits of ``category`` (a Trait sheet), her Attribute (a
        test-pool sheet), else "—": a sheet of dots (``storytelling``) has
        three Attributes a category, not one count."""
        if obj.chronicle.has_test_pools:
            return getattr(obj, f"{category.value}_attribute")
        if cls._trait_sheet(obj):
            return getattr(obj, f"{category.value}_total")
        return NOT_USED

    @admin.display(description="Physical", ordering="physical_total")
    def physical(self, obj: Character) -> int | str:
        return self._rating(obj, Category.PHYSICAL)

    @admin.display(description="Social", ordering="social_total")
    def social(self, obj: Character) -> int | str:
        return self._rating(obj, Category.SOCIAL)

    @admin.display(description="Mental", ordering="mental_total")
    def mental(self, obj: Character) -> int | str:
        return self._rating(obj, Category.MENTAL)

    @admin.display(description="Health", ordering="health")
    def health_level(self, obj: Character) -> str:
        """Her MET health level on a Trait sheet; "—" on a sheet with a wound
        track (``bns``) or Health boxes (``storytelling``), marked tonight on
        her presence, not here."""
        return obj.get_health_display() if self._trait_sheet(obj) else NOT_USED


User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class PlayerSearchUserAdmin(UserAdmin):
    """Django's user admin, whose search also answers the character page's
    player field (``CharacterAdmin.autocomplete_fields``) for whoever may add
    or change characters: a narrator picks a player by typing her name or user
    name without the "view user" permission, which would open the users'
    admin (e-mail addresses, rights) to her as well. The answers are user
    names, as the player drop-down listed them before."""

    def has_view_permission(self, request, obj=None) -> bool:
        return super().has_view_permission(request, obj) or (
            obj is None and _searches_players(request)
        )


def _searches_players(request) -> bool:
    """``request`` is the admin's autocomplete for a character's player, by a
    user who may add or change characters."""
    match = request.resolver_match
    asked = (request.GET.get(key) for key in ("app_label", "model_name", "field_name"))
    return (
        match is not None
        and match.view_name == "admin:autocomplete"
        and tuple(asked) == ("characters", "character", "player")
        and (
            request.user.has_perm("characters.change_character")
            or request.user.has_perm("characters.add_character")
        )
    )


class SessionInline(admin.TabularInline):
    """The chronicle's sessions, newest first; new ones come from the action."""

    model = GameSession
    fields = ["number", "name", "started_at", "ended_at", "time_out"]
    readonly_fields = ["number", "started_at", "ended_at", "time_out"]
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Chronicle)
class ChronicleAdmin(NarratedOnlyAdmin, admin.ModelAdmin):
    """Chronicles with their narrators and ruleset; starts new sessions."""

    chronicle_path = ""
    list_display = ["name", "ruleset", "open_session_link", "characters_count"]
    search_fields = ["name"]
    filter_horizontal = ["narrators"]
    inlines = [SessionInline]
    actions = ["start_new_session"]
    readonly_fields = ["rule_options", "add_character"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(characters_total=Count("characters"))

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        # A narrator who creates a chronicle narrates it (else she could not see it).
        if not change and not request.user.is_superuser:
            form.instance.narrators.add(request.user)

    @admin.display(description="open session")
    def open_session_link(self, obj: Chronicle) -> str:
        session = obj.open_session()
        if session is None:
            return "—"
        url = reverse("admin:characters_gamesession_change", args=[session.pk])
        label = session.name or f"started {session.started_at:%Y-%m-%d %H:%M}"
        return format_html('<a href="{}">{}</a>', url, label)

    @admin.display(description="rule options")
    def rule_options(self, obj: Chronicle) -> str:
        """The chronicle's preset and the MET rule options it changes from
        met_classic (challenges/rules/options.py, docs/rules.md); for a
        ruleset that plays no MET challenge (``bns``), what its sheets hold."""
        rules = RULESETS.get(obj.ruleset)
        if rules is not None and rules.dice_pools:
            return (
                f"{rules.name}: sheets of Attributes and {rules.skills_label} in dots, "
                "rolled as d10 dice pools; no Traits are bid, so no MET rule options apply"
            )
        if rules is not None and not rules.met_challenges:
            return (
                f"{rules.name}: sheets of Attributes and {rules.skills_label} added into "
                "test pools; no Traits are bid, so no MET rule options apply"
            )
        options = PRESETS.get(obj.ruleset)
        if options is None:
            return f"{obj.ruleset}: unknown preset"
        changed = changed_options(options)
        changes = ", ".join(f"{name} = {value}" for name, value in changed) or "none"
        return f"preset {obj.ruleset}; changes from met_classic: {changes}"

    @admin.display(description="new character")
    def add_character(self, obj: Chronicle) -> str:
        """A link to add a character to this chronicle: her page opens with the
        sheet its ruleset uses (a ``bns`` chronicle's Attributes and Skills)."""
        if obj.pk is None:
            return "—"
        url = reverse("admin:characters_character_add") + f"?chronicle={obj.pk}"
        return format_html('<a href="{}">Add a character to {}</a>', url, obj.name)

    @admin.display(description="characters", ordering="characters_total")
    def characters_count(self, obj: Chronicle) -> int:
        return obj.characters_total

    @admin.action(description="Start a new session", permissions=["change"])
    def start_new_session(self, request, queryset):
        """End each selected chronicle's open session and open a new one: every
        lost Trait is restored, the old session keeps its history.

        First a confirmation page names, per chronicle, the session that ends
        and what it stops (``challenges.services.session_ending``); only its
        POST with ``post=yes`` starts the sessions, each numbered as shown (a
        chronicle whose session another narrator started meanwhile is refused
        with a message, the others start)."""
        from challenges.services import ActionRefused, session_ending

        chronicles = list(queryset.order_by("name"))
        if request.POST.get("post") != "yes":
            rows = []
            for chronicle in chronicles:
                session = chronicle.open_session()
                number = GameSession(chronicle=chronicle).next_number
                rows.append(
                    {
                        "chronicle": chronicle,
                        "session": session,
                        "number": number,
                        "ending": session_ending(session).parts,
                    }
                )
            context = {
                **self.admin_site.each_context(request),
                "title": "Start a new session?",
                "opts": self.model._meta,
                "rows": rows,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                "media": self.media,
            }
            return TemplateResponse(
                request, "admin/characters/chronicle/start_session_confirmation.html", context
            )
        name = request.POST.get("name", "").strip()
        for chronicle in chronicles:
            number = request.POST.get(f"number_{chronicle.pk}", "")
            try:
                if not number.isdigit():
                    raise ActionRefused("not confirmed; choose the action again.")
                session = session_start(
                    chronicle=chronicle, user=request.user, name=name, number=int(number)
                )
            except ActionRefused as refused:
                self.message_user(request, f"{chronicle}: {refused}", messages.ERROR)
                continue
            self.message_user(
                request, f"{chronicle}: new session {session} started.", messages.SUCCESS
            )
        return None


class PresenceForm(ModelForm):
    """A presence whose character belongs to the session's chronicle."""

    class Meta:
        model = Presence
        fields = [
            "session",
            "character",
            "health",
            "willpower_spent",
            "rage_spent",
            "gnosis_spent",
            "blood_spent",
            "blood_traits",
            "blood_traits_until",
        ]

    def clean(self):
        cleaned = super().clean()
        session = cleaned.get("session") or getattr(self.instance, "session", None)
        character = cleaned.get("character")
        if session and character and character.chronicle_id != session.chronicle_id:
            raise ValidationError(f"{character} is not a character of {session.chronicle}.")
        damage = cleaned.get("damage")
        if character and damage and not character.stock_npc:
            boxes = sum(getattr(character, name) for name in Character.WOUND_BOXES)
            if damage > boxes:
                self.add_error("damage", f"{character} has {boxes} wound boxes in all.")
        marked = sum(cleaned.get(name) or 0 for name in Presence.TRACK)
        if character and marked:
            sheet = StorySheet.objects.filter(character=character).first()
            boxes = (sheet or StorySheet()).health
            if marked > boxes:
                self.add_error(None, f"{character} has {boxes} Health boxes ({marked} marked).")
        return cleaned


class PresenceInline(admin.TabularInline):
    """Characters present at a session, with their health tonight."""

    model = Presence
    form = PresenceForm
    fields = ["character", "health", "arrived_at"]
    readonly_fields = ["arrived_at"]
    extra = 0

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        if obj is not None:
            field = formset.form.base_fields["character"]
            field.queryset = field.queryset.filter(chronicle_id=obj.chronicle_id)
        return formset


class OpenFilter(admin.SimpleListFilter):
    """Open (being played) or ended sessions."""

    title = "state"
    parameter_name = "open"

    def lookups(self, request, model_admin):
        return [("yes", "Open"), ("no", "Ended")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(ended_at__isnull=True)
        if self.value() == "no":
            return queryset.filter(ended_at__isnull=False)
        return queryset


@admin.register(GameSession)
class GameSessionAdmin(NarratedOnlyAdmin, admin.ModelAdmin):
    """Sessions and who is present. Started by the chronicle action; time out
    belongs to the narrators' dashboard, which tells every phone."""

    list_display = ["__str__", "chronicle", "started_at", "ended_at", "time_out", "present"]
    list_filter = [OpenFilter, ("chronicle", RelatedOnly), "time_out"]
    list_select_related = ["chronicle"]
    search_fields = ["name", "chronicle__name"]
    fields = [
        "chronicle",
        "number",
        "name",
        "started_at",
        "ended_at",
        "time_out",
        "time_out_since",
    ]
    readonly_fields = [
        "chronicle",
        "number",
        "started_at",
        "ended_at",
        "time_out",
        "time_out_since",
    ]
    date_hierarchy = "started_at"
    inlines = [PresenceInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(present_total=Count("presences"))

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="present", ordering="present_total")
    def present(self, obj: GameSession) -> int:
        return obj.present_total


@admin.register(Presence)
class PresenceAdmin(NarratedOnlyAdmin, admin.ModelAdmin):
    """Every presence, by session and chronicle."""

    chronicle_path = "session__chronicle"
    form = PresenceForm
    list_display = ["character", "session", "health", "status", "pools_spent", "arrived_at"]
    list_filter = [("session__chronicle", RelatedOnly), "health", "status"]
    list_select_related = ["character", "session__chronicle"]
    search_fields = ["character__name", "session__name"]
    readonly_fields = ["arrived_at"]

    def get_fields(self, request, obj=None):
        """Her presence's fields; for a test-pool sheet (``bns``) also tonight's
        damage, Garou form and fate (dead or staked by Pierce the Heart); for a
        dice-pool sheet (``storytelling``) her health track tonight (boxes
        marked aggravated, lethal, bashing)."""
        fields = list(super().get_fields(request, obj))
        if obj is not None and obj.session.chronicle.has_test_pools:
            fields[-1:-1] = ["damage", "form", "fate"]
        if obj is not None and obj.session.chronicle.has_dice_pools:
            fields[-1:-1] = list(Presence.TRACK)
        return fields

    @admin.display(description="pools spent tonight")
    def pools_spent(self, obj: Presence) -> str:
        """ "Willpower 1, Blood 2" (what she spent this session), "—" for none."""
        spent = [
            f"{pool.title()} {getattr(obj, f'{pool}_spent')}"
            for pool in Character.POOLS
            if getattr(obj, f"{pool}_spent")
        ]
        return ", ".join(spent) or "—"


@admin.register(Immunity)
class ImmunityAdmin(NarratedOnlyAdmin, admin.ModelAdmin):
    """Immunities won by Willpower retests (ukm), written by the challenges
    themselves: read-only here; a narrator may delete one to lift it."""

    chronicle_path = "session__chronicle"
    list_display = ["character", "attacker", "power", "until", "session"]
    list_filter = [("session__chronicle", RelatedOnly)]
    list_select_related = ["character", "attacker", "session__chronicle"]
    search_fields = ["character__name", "attacker__name", "power"]
    readonly_fields = ["session", "character", "attacker", "power", "until"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
